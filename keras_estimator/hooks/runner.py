"""Drives unmodified `SessionRunHook`s from the Estimator's training loop.

The protocol is tf.estimator's, call for call: `begin()` once per call, in the traced graph
(after the model_fn, so hooks find its tensors); `after_create_session()` once variables
are restored; then `before_run()` -> the step -> `after_run()` for every step; `end()`.
What a hook fetches is pruned from the same trace the first time it asks for it (see
engine/loops.py), so knowing the fetches ahead needs no extra call. A step a hook fetches
from runs alone; steps from which no hook needs anything run as one compiled chunk while
the hooks are walked through them; `request_stop()` ends training after the step.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import keras
import tensorflow as tf

from keras_estimator.engine.random_streams import same_draw
from keras_estimator.hooks.session import HookSession, fetch_id, savers_run_on_the_model
from keras_estimator.hooks.variable_names import variable_named, variables_resolvable_by_name
from keras_estimator.seam import internals

_V1 = tf.compat.v1


def validate_hooks(hooks: Any) -> tuple[list, list]:
    """Splits `hooks=` into (SessionRunHooks, Keras callbacks); anything else is a TypeError."""
    session_hooks, callbacks = [], []
    for hook in list(hooks or []):
        if isinstance(hook, keras.callbacks.Callback):
            callbacks.append(hook)
            continue
        if not isinstance(hook, _V1.train.SessionRunHook):
            raise TypeError(
                f"Hooks must be a SessionRunHook or a keras.callbacks.Callback, given: {hook}"
            )
        _check_supported(hook)
        session_hooks.append(hook)
    return session_hooks, callbacks


def _check_supported(hook: Any) -> None:
    if isinstance(hook, _V1.train.FeedFnHook):
        raise NotImplementedError(
            "FeedFnHook is not supported by keras_estimator: a Keras step has no "
            "placeholders to feed. Expected the input to come from input_fn; move the fed "
            "values into the dataset."
        )


def is_saver_hook(hook: Any) -> bool:
    return isinstance(hook, _V1.train.CheckpointSaverHook)


def validate_listeners(listeners: Any) -> list:
    listeners = list(listeners or [])
    for listener in listeners:
        if not isinstance(listener, _V1.train.CheckpointSaverListener):
            raise TypeError(
                f"saving_listeners must be a list of CheckpointSaverListener, given: {listener}"
            )
    return listeners


def _needs_the_real_step(hook: Any) -> bool:
    """Hooks that must see every step itself, even when they fetch nothing."""
    # LoggingTensorHook(at_end=True) logs the last step's values; FinalOpsHook reads its
    # final ops in end().
    return internals.logs_at_end(hook) or internals.final_ops(hook) is not None


# after_run methods that, on a step whose fetches are None, only count the step.
_COUNTING_AFTER_RUNS = (
    _V1.train.SessionRunHook.after_run,
    _V1.train.LoggingTensorHook.after_run,
)


def _counts_only(hook: Any) -> bool:
    """Hooks known to only count iterations in after_run on steps where they fetch nothing."""
    return (
        isinstance(hook, _V1.train.LoggingTensorHook)
        or type(hook).after_run in _COUNTING_AFTER_RUNS
    )


def _checked_args(hook: Any, args: Any) -> Any:
    if args is not None and not isinstance(args, _V1.train.SessionRunArgs):
        raise TypeError(
            f"{type(hook).__name__}.before_run must return a SessionRunArgs or None, given "
            f"{type(args).__name__}: {args!r:.200}. Fix: return "
            "tf.compat.v1.train.SessionRunArgs(fetches)."
        )
    return args


def _as_fetchable(fetch: Any, graph: tf.Graph) -> tf.Tensor:
    """A tensor for one leaf of a hook's fetches: tensors, names, variables or ops."""
    if isinstance(fetch, str):
        try:
            fetch = graph.as_graph_element(fetch)
        except (KeyError, ValueError) as exc:
            raise ValueError(
                f"A hook asked to fetch {fetch!r}, which is not in the model_fn's graph. "
                "Expected the name of a tensor or op the model_fn created."
            ) from exc
    if isinstance(fetch, tf.Operation):
        with tf.control_dependencies([fetch]):
            return tf.constant(True)
    if isinstance(fetch, tf.Variable):
        return tf.identity(fetch.read_value())
    if isinstance(fetch, tf.Tensor) and hasattr(fetch, "numpy"):
        return tf.constant(fetch.numpy())  # an eager tensor is a constant of the step
    if isinstance(fetch, tf.Tensor):
        if fetch.graph is not graph:
            raise ValueError(
                f"A hook asked to fetch {fetch!r}, which belongs to another graph. Expected a "
                "tensor from the model_fn of this Estimator (or its name)."
            )
        return tf.identity(same_draw(fetch))  # a replaced random op: the numbers drawn
    raise TypeError(f"A hook fetch must be a tensor, op, variable or name; given: {fetch!r}")


class HookRunner:
    """The hooks of one `train` / `evaluate` call and the state they share."""

    def __init__(self, hooks: list, session: HookSession) -> None:
        self.user_hooks = list(hooks)
        self.session = session
        self.hooks: list = [h for h in hooks if not is_saver_hook(h)]
        # CheckpointSaverHooks are not driven: the training loop saves as they would have.
        self.saver_hooks: list = [h for h in hooks if is_saver_hook(h)]
        self._keys: dict[Any, str] = {}  # fetch (id or name) -> step output key
        self._tensors: dict[str, tf.Tensor] = {}  # step output key -> tensor of the trace
        # Variables a hook fetches (`LoggingTensorHook({"step": global_step, "w": w})`), by
        # key: read on the host right before their step runs, so after_run sees the value
        # the step started from, as 2.15's session read them beside the train op.
        self._variable_fetches: dict[str, Any] = {}
        self._variable_values: dict[str, Any] = {}
        # The ops a step runs (set once traced): what a hook fetches outside the trace is
        # read after them, as a fetch made in the trace is (automatic control dependencies).
        self.step_ops: list = []
        self._requests: list = []
        self._graph: tf.Graph | None = None
        # Fetchable tensors made in the traced graph, by the fetch they read (kept with it,
        # so its id stays its own): shared by every call's runner on the same trace, so a
        # later call fetches the same tensors and its loop is the one already made.
        self._fetchables: dict[Any, tuple[Any, tf.Tensor]] = {}
        self._source: tf.Graph | None = None  # the graph this call's hooks began in
        self._pending = False  # before_run of the next step already called
        # Hooks with their own after_run are walked ahead of the step only once they ran
        # one real step without reading the session there (it would read stale values).
        self._probed: set[int] = set()
        self._session_readers: set[int] = set()

    # -- trace time ------------------------------------------------------------------
    def attach(self, spec_hooks: tuple, graph: tf.Graph, global_step_read: tf.Tensor) -> None:
        """Called inside the traced step after the model_fn: begins every hook there."""
        for hook in spec_hooks:
            _check_supported(hook)
        hooks = self.user_hooks + list(spec_hooks)
        self.hooks = [h for h in hooks if not is_saver_hook(h)]
        self.saver_hooks = [h for h in hooks if is_saver_hook(h)]
        self._graph = graph
        self.session.global_step_tensors.add(id(global_step_read))
        with variables_resolvable_by_name(graph):
            for hook in self.hooks:
                hook.begin()

    def attached_to(self, graph: tf.Graph) -> bool:
        """True once `attach` ran in `graph` (another replica of the same trace)."""
        return self._graph is graph

    @property
    def _attached_graph(self) -> tf.Graph:
        """The traced step's graph the hooks began in (given by attach, join or adopt)."""
        graph = self._graph
        assert graph is not None  # the runner is attached before any use of its graph
        return graph

    def _key_of(self, fetch: Any) -> str | None:
        return self._keys.get(fetch_id(fetch))

    def _register(self, fetches: Any) -> None:
        """Gives each new leaf of `fetches` a key and a fetchable tensor of the trace."""
        new = [f for f in tf.nest.flatten(fetches) if f is not None and self._key_of(f) is None]
        if not new:
            return
        graph = self._attached_graph
        with (
            graph.as_default(),
            tf.control_dependencies(self.step_ops),
            variables_resolvable_by_name(graph),
        ):
            for fetch in new:
                if self._key_of(fetch) is not None:
                    continue
                variable = fetch if isinstance(fetch, tf.Variable) else variable_named(graph, fetch)
                if variable is not None:
                    key = f"hook_variable_{len(self._variable_fetches)}"
                    self._variable_fetches[key] = variable
                else:
                    key = f"hook_{len(self._tensors)}"
                    self._tensors[key] = self._fetchable(fetch)
                self._keys[fetch_id(fetch)] = key

    def _fetchable(self, fetch: Any) -> tf.Tensor:
        graph = self._attached_graph
        if (
            self._source is not None
            and isinstance(fetch, (tf.Tensor, tf.Operation))
            and getattr(fetch, "graph", None) is self._source
        ):
            fetch = graph.as_graph_element(fetch.name)  # see adopt()
        kept = self._fetchables.get(fetch_id(fetch))
        if kept is None:
            kept = self._fetchables[fetch_id(fetch)] = (fetch, _as_fetchable(fetch, graph))
        return kept[1]

    def fetch_tensors(self) -> dict[str, tf.Tensor]:
        """Every tensor the hooks asked for so far, by step output key (for the loop's
        `with_fetches`); empty when no hook fetches anything."""
        return dict(self._tensors)

    def join(self, traced: HookRunner) -> None:
        """For another call on `traced`'s trace: begin() these hooks in the traced graph,
        after its step's ops, as on a fresh trace."""
        self._share_trace_of(traced)
        graph = self._attached_graph
        with (
            graph.as_default(),
            tf.control_dependencies(self.step_ops),
            variables_resolvable_by_name(graph),
        ):
            for hook in self.hooks:
                hook.begin()

    def adopt(self, traced: HookRunner, source: tf.Graph) -> None:
        """These hooks, begun in `source` (a trace of the same step as `traced`'s), run on
        `traced`'s trace: each tensor or op they fetch from `source` is the same-named one
        of `traced`'s graph (equal GraphDefs: same names, same computation)."""
        self._share_trace_of(traced)
        self._source = source

    def _share_trace_of(self, traced: HookRunner) -> None:
        self._graph = traced._graph
        self.session.global_step_tensors |= traced.session.global_step_tensors
        self.step_ops = traced.step_ops
        self._fetchables = traced._fetchables

    # -- run time ------------------------------------------------------------------
    @property
    def active(self) -> bool:
        return bool(self.hooks)

    def after_create_session(self) -> None:
        for hook in self.hooks:
            hook.after_create_session(self.session, _V1.train.Coordinator())

    def quiet_steps(self, limit: int) -> int:
        """Runs the hooks ahead through steps that need nothing from the step itself.

        While no hook asks for a fetch, the hooks are walked through before_run/after_run
        for up to `limit` upcoming steps, so those steps can run as one compiled chunk;
        returns how many. A request_stop() in the walk ends the chunk at that step, so
        stops stay exact. Hooks whose after_run reads the session, FinalOpsHook and
        LoggingTensorHook(at_end=True) see every step run alone; a hook with its own
        after_run is walked ahead only after one real step showed it does not read the
        session. When a hook asks for a fetch, that step's before_run has happened:
        `prepare_step` will not repeat it. Time-based triggers (every_n_secs) are noticed
        at chunk boundaries, and timestamps a hook takes are those of the walk.
        """
        if self._pending or not all(self._may_walk_ahead(hook) for hook in self.hooks):
            return 0
        quiet = 0
        nothing = _V1.train.SessionRunValues(None, None, None)
        with self._in_trace_graph():  # entered once for the walk (~25 us a step)
            while quiet < limit:
                self._before_run()
                if any(f is not None for fetches in self._requests
                       for f in tf.nest.flatten(fetches)):  # fmt: skip
                    self._pending = True
                    break
                for hook in self.hooks:
                    calls = self.session.calls
                    # A hook's own after_run runs eagerly, as after a real step; TF's that
                    # only count stay in the graph (leaving it costs ~40 us a step).
                    counts = type(hook).after_run in _COUNTING_AFTER_RUNS
                    with contextlib.nullcontext() if counts else tf.init_scope():
                        hook.after_run(self._context, nothing)
                    if self.session.calls != calls:
                        self._session_readers.add(id(hook))  # real steps only from now on
                quiet += 1
                if self._context.stop_requested:
                    break
        return quiet

    def _may_walk_ahead(self, hook: Any) -> bool:
        if _needs_the_real_step(hook):
            return False
        if _counts_only(hook):
            return True
        return id(hook) in self._probed and id(hook) not in self._session_readers

    def prepare_step(self) -> None:
        """before_run for a step that runs alone (unless quiet_steps already called it)."""
        if not self._pending:
            self.before_step()
        self._pending = False
        # Now, with the steps walked ahead of it run: the values this step starts from.
        self._variable_values = self._read_variables(self._requests)

    def before_step(self) -> None:
        with self._in_trace_graph():
            self._before_run()

    @contextlib.contextmanager
    def _in_trace_graph(self) -> Iterator[None]:
        # As in tf.estimator's session, the model's graph is the default one here:
        # `tf.train.get_global_step()` and lookups by name work in before_run.
        graph = self._attached_graph
        with graph.as_default(), variables_resolvable_by_name(graph), savers_run_on_the_model():
            yield

    def _before_run(self) -> None:
        self._context = _V1.train.SessionRunContext(_V1.train.SessionRunArgs(None), self.session)
        self._requests = []
        for hook in self.hooks:
            args = _checked_args(hook, hook.before_run(self._context))
            if args is not None and args.feed_dict:
                raise NotImplementedError(
                    f"{type(hook).__name__} feeds values (feed_dict); there are no "
                    "placeholders in a Keras step, so feed_dict hooks are not supported."
                )
            fetches = None if args is None else args.fetches
            self._register(fetches)
            self._register(internals.final_ops(hook))  # FinalOpsHook reads them in end()
            self._requests.append(fetches)

    def _read_variables(self, requests: list) -> dict[str, Any]:
        """The values, now, of the variables these requests fetch (see _variable_fetches)."""
        if not self._variable_fetches:
            return {}
        keys = {self._key_of(f) for fetches in requests for f in tf.nest.flatten(fetches)}
        with tf.init_scope():  # before_run runs with the traced graph as the default
            return {
                key: variable.numpy()
                for key, variable in self._variable_fetches.items()
                if key in keys
            }

    def after_step(self, values: dict) -> bool:
        """Feeds the step's values to the hooks; True when one of them requested a stop."""
        # session.run(variable) in after_run reads it anew (after the step), as it did.
        self.session.last_values = {
            key_id: values[key] for key_id, key in self._keys.items() if key in values
        }
        if self._variable_values:  # most steps fetch no variable: no copy of the values
            values = {**values, **self._variable_values}
        for hook, fetches in zip(self.hooks, self._requests):
            results = tf.nest.map_structure(
                lambda f: values[self._key_of(f)] if f is not None else None, fetches
            )
            calls = self.session.calls
            hook.after_run(self._context, _V1.train.SessionRunValues(results, None, None))
            self._probed.add(id(hook))
            if self.session.calls != calls:
                self._session_readers.add(id(hook))
        return self._context.stop_requested

    @property
    def stop_requested(self) -> bool:
        context = getattr(self, "_context", None)
        return bool(context is not None and context.stop_requested)

    def end(self) -> None:
        """end(session) of every hook, with the traced graph as the default one, as under
        tf.estimator's session (a FileWriter made there, AdaNet's evaluation hooks'; a
        lookup by name)."""
        with self._in_trace_graph() if self._graph is not None else contextlib.nullcontext():
            for hook in self.hooks:
                hook.end(self.session)
