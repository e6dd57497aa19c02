"""A Scaffold's `init_fn` and `saver`, run as tf.estimator 2.15 ran them, without a session.

2.15 called `scaffold.init_fn(scaffold, session)` once, after the variables were
initialised, when the session did not start from a checkpoint (model_dir had none), and
restored checkpoints with `scaffold.saver.restore(session, path)` when the Scaffold had a
Saver. Here both run eagerly, once the mode's step is traced, on a `ScaffoldSession`:

* `saver.restore(session, path)` (a `tf.compat.v1.train.Saver`, also tf-slim's
  `assign_from_checkpoint_fn(...)`) restores eagerly into the model's variables; a Saver
  built without a var_list restores the model's global variables, as in the TF1 graph;
* `session.run(fetches)` reads variables and runs ops the model_fn built from variables
  and constants (`tf.compat.v1.assign(v, value)`, `tf.group(*assigns)`), pruned from the
  traced step as TF1's session ran only what the fetches needed;
* what needs the step's input data, a `feed_dict` or a session of its own raises an
  error saying what to use instead.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from typing import Any

import tensorflow as tf

from keras_estimator.engine.variable_store import VariableStore
from keras_estimator.seam import internals

logger = logging.getLogger("keras_estimator")

_KEYS = tf.compat.v1.GraphKeys
# What `tf.compat.v1.global_variables()` & co. (and a Saver without var_list) read while an
# init_fn runs: the model's variables, as in the TF1 graph the session ran.
_VARIABLE_COLLECTIONS = (_KEYS.GLOBAL_VARIABLES, _KEYS.TRAINABLE_VARIABLES,
                         _KEYS.MODEL_VARIABLES, _KEYS.GLOBAL_STEP)  # fmt: skip


class ScaffoldSession:
    """The `session` a Scaffold's init_fn and Saver get: `run(fetches)` and `graph`.

    Example:
        >>> def init_fn(scaffold, session):
        ...     saver.restore(session, "pretrained/model.ckpt")   # or session.run(assign_op)
        >>> EstimatorSpec(mode, loss=loss, train_op=train_op,
        ...               scaffold=tf.compat.v1.train.Scaffold(init_fn=init_fn))
    """

    def __init__(self, graph: tf.Graph | None, store: VariableStore) -> None:
        self._graph = graph
        self._store = store

    @property
    def graph(self) -> tf.Graph | None:
        """The graph the model_fn built (the traced step's)."""
        return self._graph

    def run(
        self, fetches: Any, feed_dict: Any = None, options: Any = None, run_metadata: Any = None
    ) -> Any:
        """Values of `fetches` (variables, their names, tensors and ops of the model_fn's
        graph, eager values), as `tf.compat.v1.Session.run` gives them; ops give None."""
        del options, run_metadata  # nothing to trace or tune without a session
        if feed_dict:
            raise NotImplementedError(
                "A Scaffold init_fn's session.run(feed_dict=...) is not supported by "
                "keras_estimator: the model_fn's graph has been traced, its placeholders "
                "cannot be fed afterwards. Expected session.run() of variables or of ops "
                "built from variables and constants, or a Saver's restore(session, path). "
                "Fix: build the assignment from constants (tf.compat.v1.assign(v, value)), "
                "or restore with tf.compat.v1.train.Saver / init_from_checkpoint. "
                f"Received: feed_dict keys={[getattr(k, 'name', k) for k in feed_dict]}"
            )
        flat = tf.nest.flatten(fetches)
        resolved = [self._resolve(fetch) for fetch in flat]
        graph_fetches = [f for f in resolved if _in_graph(f)]
        values = dict(zip(map(id, graph_fetches), self._run_in_graph(graph_fetches)))
        results: list[Any] = []
        for fetch, target in zip(flat, resolved):
            if target is None:
                results.append(None)
            elif _in_graph(target):
                value = values[id(target)]
                if isinstance(fetch, tf.Variable):  # `tf.compat.v1.assign(...)` in the graph
                    value = self._assigned_variable(target)
                results.append(None if value is None else value.numpy())
            else:
                results.append(target.numpy())
        return tf.nest.pack_sequence_as(fetches, results)

    def _resolve(self, fetch: Any) -> Any:
        """The eager value (a variable, a tensor) or graph element `fetch` names."""
        if fetch is None:
            return None
        if isinstance(fetch, str):
            variable = self._store.variables.get(fetch.split(":")[0])
            if variable is not None:
                return variable
            if self._graph is None:
                raise ValueError(
                    f"A Scaffold init_fn's session cannot find {fetch!r}: no graph was traced. "
                    f"Fix: fetch the variable or op itself. Received: fetch={fetch!r}"
                )
            return self._graph.as_graph_element(fetch)
        if isinstance(fetch, tf.Variable):
            op = _graph_op(fetch)  # an assignment built in the graph returns a variable
            return op if op is not None else fetch
        if isinstance(fetch, tf.Tensor | tf.Operation) or hasattr(fetch, "numpy"):
            return fetch
        raise TypeError(
            "A Scaffold init_fn's session.run() takes variables, tensors, operations and "
            "their names (in lists, tuples and dicts). Fix: fetch one of those. "
            f"Received: fetch of type {type(fetch).__name__}"
        )

    def _run_in_graph(self, fetches: list) -> list:
        if not fetches:
            return []
        graph = fetches[0].graph
        if any(f.graph is not graph for f in fetches):
            raise ValueError(
                "A Scaffold init_fn's session.run() got tensors of several graphs. Expected "
                "tensors and ops of the model_fn's own graph. Fix: fetch them in separate "
                f"run() calls. Received: fetches={[f.name for f in fetches]}"
            )
        run = internals.prune_graph(graph, None, fetches, with_arguments=False)
        return list(run())

    def _assigned_variable(self, assign: tf.Operation) -> tf.Variable | None:
        """The model variable an assignment op of the traced graph wrote (its value is what
        TF1's session.run gave for `tf.compat.v1.assign(...)`)."""
        handle = assign.inputs[0] if assign.inputs else None
        external = next((e for e, i in assign.graph.captures if i is handle), None)
        for variable in self._store.variables.values():
            if external is not None and variable.handle is external:
                return variable
        return None


def _graph_op(variable: tf.Variable) -> tf.Operation | None:
    try:
        op = variable.op
    except AttributeError:  # an eager variable: "Tensor.op is undefined"
        return None
    return op if isinstance(op, tf.Operation) else None


def _in_graph(target: Any) -> bool:
    return isinstance(target, tf.Tensor | tf.Operation) and not hasattr(target, "numpy")


@contextlib.contextmanager
def model_variables_collected(
    graph: tf.Graph | None, variables: dict[str, tf.Variable]
) -> Iterator[None]:
    """Inside, `tf.compat.v1.global_variables()` (and trainable / model variables, the
    global step) give `variables`, as the TF1 graph 2.15's session ran gave its own."""
    eager_graph = tf.compat.v1.get_default_graph()
    contents = {
        _KEYS.GLOBAL_VARIABLES: list(variables.values()),
        _KEYS.TRAINABLE_VARIABLES: [v for v in variables.values() if v.trainable],
        _KEYS.MODEL_VARIABLES: graph.get_collection(_KEYS.MODEL_VARIABLES) if graph else [],
        _KEYS.GLOBAL_STEP: [v for name, v in variables.items() if name == "global_step"],
    }
    saved = {key: list(eager_graph.get_collection(key)) for key in _VARIABLE_COLLECTIONS}
    try:
        for key in _VARIABLE_COLLECTIONS:
            eager_graph.get_collection_ref(key)[:] = contents[key]
        yield
    finally:
        for key in _VARIABLE_COLLECTIONS:
            eager_graph.get_collection_ref(key)[:] = saved[key]


def run_init_fn(scaffold: Any, graph: tf.Graph | None, store: VariableStore) -> bool:
    """Calls `scaffold.init_fn(scaffold, session)` once; True when there was one. For the
    start from fresh variables (after init_from_checkpoint and the warm start), as 2.15
    called it after its init_op."""
    init_fn = getattr(scaffold, "init_fn", None)
    if init_fn is None:
        return False
    logger.info("Running the Scaffold's init_fn (model_dir has no checkpoint).")
    with internals.eager_mode(), model_variables_collected(graph, store.global_variables()):
        init_fn(ScaffoldSession(graph, store))  # Scaffold binds itself as the first argument
    return True


def restore_with_saver(
    scaffold: Any,
    checkpoint: str,
    graph: tf.Graph | None,
    store: VariableStore,
    variables: dict[str, tf.Variable],
) -> bool:
    """`scaffold.saver.restore(session, checkpoint)` when the Scaffold has a Saver (its
    var_list, a renaming dict included, decides what is read; without one, `variables`:
    those of the mode's step); True when it ran."""
    saver = getattr(scaffold, "saver", None)
    if isinstance(saver, tf.train.Checkpoint):
        # Object-based (2.15 restored with the Checkpoint's own saveables): its keys.
        with internals.eager_mode():
            saver.read(checkpoint).assert_existing_objects_matched()
        return True
    if saver is None or not callable(getattr(saver, "restore", None)):
        return False
    with internals.eager_mode(), model_variables_collected(graph, variables):
        saver.restore(ScaffoldSession(graph, store), checkpoint)
    return True
