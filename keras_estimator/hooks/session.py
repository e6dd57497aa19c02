"""A session-like object for hooks: `session.run(...)` on variables and the global step.

TF1 hooks call `run_context.session.run(global_step_tensor)` and similar outside the
training step. Variables live eagerly in the engine's store, so reading them needs no
session; tensors of the traced step are answered from the step's last fetched values.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import tensorflow as tf

from keras_estimator.engine.variable_store import VariableStore
from keras_estimator.seam import internals
from keras_estimator.seam.patching import patched


def fetch_id(fetch: Any) -> Any:
    """How a fetch is looked up: names by value, objects by identity."""
    return fetch if isinstance(fetch, str) else id(fetch)


# An input_fn run in a graph of its own (runtime/queue_input.py) keeps its session on that
# graph, so a hook's `session.run(iterator.initializer, feed_dict=...)` runs there.
_INPUT_SESSION_ATTR = "_keras_estimator_input_session"


def attach_input_session(graph: tf.Graph, session: Any) -> None:
    """Makes `session` (with a `run(fetches, feed_dict)`) the one of `graph`'s ops."""
    setattr(graph, _INPUT_SESSION_ATTR, session)


def _input_session_for(fetches: Any) -> Any:
    """The input session whose graph `fetches` belong to, or None."""
    for fetch in tf.nest.flatten(fetches):
        session = getattr(getattr(fetch, "graph", None), _INPUT_SESSION_ATTR, None)
        if session is not None:
            return session
    return None


class HookSession:
    """What `run_context.session` and `end(session)` give hooks."""

    def __init__(self, store: VariableStore, global_step: tf.Variable) -> None:
        self._store = store
        self._global_step = global_step
        self.last_values: dict[Any, Any] = {}  # fetch_id -> its value at the last step
        self.global_step_tensors: set[int] = set()
        self.calls = 0  # how many times hooks ran the session (the runner watches it)
        # Tensors run outside the step, by id: (the tensor, kept so its id stays its own,
        # and the function recomputing it from the variables).
        self._recomputing: dict[int, tuple[tf.Tensor | tf.Operation, Any]] = {}

    @property
    def graph(self) -> tf.Graph:
        return tf.compat.v1.get_default_graph()

    def model_variables(self) -> list:
        """The model's global variables (the global step included), by name."""
        return [v for _, v in sorted(self._store.global_variables().items())]

    def run(
        self, fetches: Any, feed_dict: Any = None, options: Any = None, run_metadata: Any = None
    ):
        self.calls += 1
        input_session = _input_session_for(fetches)
        if input_session is not None:  # the input_fn's own graph (an iterator initializer)
            return input_session.run(fetches, feed_dict=feed_dict)
        if feed_dict:
            raise NotImplementedError(
                "session.run(feed_dict=...) is not supported by keras_estimator's hook "
                "session: there are no placeholders to feed in a Keras step. Fix: fetch "
                "without feed_dict, or compute the value in the model_fn. "
                f"Received: feed_dict keys={[getattr(k, 'name', k) for k in feed_dict]}"
            )
        with tf.init_scope():  # values are read eagerly, also from a hook's end() (graph)
            return tf.nest.map_structure(self._value, fetches)

    def _value(self, fetch: Any) -> Any:
        if fetch is None:
            return None
        if id(fetch) in self.global_step_tensors:
            return self._global_step.numpy()
        if fetch_id(fetch) in self.last_values:
            return self.last_values[fetch_id(fetch)]
        if isinstance(fetch, tf.Variable):
            assignment = internals.assignment_op(fetch)
            if assignment is not None and hasattr(assignment.graph, "captures"):
                self._value(assignment)  # `v.assign(x)` made in the trace: it runs first
            return fetch.numpy()
        name = fetch if isinstance(fetch, str) else getattr(fetch, "name", None)
        if isinstance(name, str):
            base = name.split(":")[0]
            if base == "global_step" or base.startswith("global_step_read"):
                return self._global_step.numpy()
            variable = self._store.variables.get(base)
            if variable is not None:
                return variable.numpy()
        if isinstance(fetch, tf.Operation) and not hasattr(fetch.graph, "captures"):
            return None
        detail = ""
        if isinstance(fetch, tf.Tensor | tf.Operation) and hasattr(fetch.graph, "captures"):
            # A tensor or op of the traced step computed from variables alone (a metric's
            # value in an evaluation hook's end(), an assignment a hook runs): what TF1's
            # session.run gave, from the values now.
            try:
                value = self._recomputed(fetch)()
            except ValueError as exc:
                if isinstance(fetch, tf.Operation):
                    return None  # an op of the step's (its input's): it ran with the step
                detail = f" ({exc})"
            else:
                return None if value is None else value.numpy()
        raise ValueError(
            f"Hook session cannot run {fetch!r}: outside the training step only variables, "
            "the global step, tensors computed from variables alone and tensors the hook "
            "fetched through before_run() can be read. Fix: request the tensor in "
            "before_run() (SessionRunArgs) and read it in after_run(). "
            f"Received: fetch={getattr(fetch, 'name', fetch)!r}{detail}"
        )

    def _recomputed(self, fetch: tf.Tensor | tf.Operation) -> Any:
        kept = self._recomputing.get(id(fetch))
        if kept is None:
            kept = self._recomputing[id(fetch)] = (
                fetch,
                internals.recomputed_from_variables(fetch),
            )
        return kept[1]


@contextlib.contextmanager
def _global_variables_are(variables: list) -> Iterator[None]:
    """The eager default graph's GLOBAL_VARIABLES are `variables` inside (what a Saver made
    without a var_list saves, as in the TF1 graph the session ran)."""
    collection = tf.compat.v1.get_default_graph().get_collection_ref(
        tf.compat.v1.GraphKeys.GLOBAL_VARIABLES
    )
    saved = list(collection)
    collection[:] = variables
    try:
        yield
    finally:
        collection[:] = saved


def _on_the_model(method: Callable) -> Callable:
    def run(saver: Any, sess: Any, *args: Any, **kwargs: Any) -> Any:
        if not isinstance(sess, HookSession):
            return method(saver, sess, *args, **kwargs)
        with (
            internals.eager_mode(),
            internals.saver_unsharded(saver),
            _global_variables_are(sess.model_variables()),
        ):
            return method(saver, sess, *args, **kwargs)

    return run


@contextlib.contextmanager
def savers_run_on_the_model() -> Iterator[None]:
    """Inside, a `tf.compat.v1.train.Saver`'s `restore(session, path)` / `save(session, path,
    ...)` given the hook session runs eagerly on the model's variables (a Saver made
    without a var_list: all its global variables), as TF1's ran in the session: a hook
    restoring or writing a checkpoint itself (AdaNet's checkpoint overwrite at a new
    iteration). Savers built in the trace have no ops to run (seam savers_without_ops)."""
    saver = tf.compat.v1.train.Saver
    with (
        patched(saver, "restore", _on_the_model(saver.restore)),
        patched(saver, "save", _on_the_model(saver.save)),
    ):
        yield
