"""Drives unmodified `SessionRunHook`s from the Estimator's training loop.

At trace time each hook's `begin()` runs in the traced graph and a first `before_run()`
tells which tensors it may fetch; those become extra outputs of the step (so a hook sees
one extra `before_run()` before `after_create_session()`). A later call with the same hooks
begins them again in that graph and reuses the trace if they ask for nothing new. At run
time a step a hook fetches from runs alone (`before_run` -> step -> `after_run` with the
requested values); `request_stop()` ends training after the step.
"""

from __future__ import annotations

from typing import Any

import keras
import tensorflow as tf

from keras_estimator.hooks.session import HookSession, fetch_id
from keras_estimator.hooks.variable_names import variables_resolvable_by_name
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


def _counts_only(hook: Any) -> bool:
    """Hooks known to only count iterations in after_run on steps where they fetch nothing."""
    if isinstance(hook, _V1.train.LoggingTensorHook):
        return True
    return type(hook).after_run is _V1.train.SessionRunHook.after_run


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
        return tf.identity(fetch)
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
        self._requests: list = []
        self._graph: tf.Graph | None = None
        self._pending = False  # before_run of the next step already called
        # Hooks with their own after_run are walked ahead of the step only once they ran
        # one real step without reading the session there (it would read stale values).
        self._probed: set[int] = set()
        self._session_readers: set[int] = set()

    # -- trace time ------------------------------------------------------------------
    def attach(self, spec_hooks: tuple, graph: tf.Graph, global_step_read: tf.Tensor) -> dict:
        """Called inside the traced step after the model_fn; returns extra step outputs."""
        for hook in spec_hooks:
            _check_supported(hook)
        hooks = self.user_hooks + list(spec_hooks)
        self.hooks = [h for h in hooks if not is_saver_hook(h)]
        self.saver_hooks = [h for h in hooks if is_saver_hook(h)]
        self._graph = graph
        self.session.global_step_tensors.add(id(global_step_read))
        with variables_resolvable_by_name(graph):
            outputs = self._begin_in_trace(graph)
        self._first_outputs = outputs
        return outputs

    def _begin_in_trace(self, graph: tf.Graph) -> dict:
        outputs: dict[str, tf.Tensor] = {}
        context = _V1.train.SessionRunContext(_V1.train.SessionRunArgs(None), self.session)
        for hook in self.hooks:
            hook.begin()
            candidates = []
            args = _checked_args(hook, hook.before_run(context))
            if args is not None:
                if args.feed_dict:
                    raise NotImplementedError(
                        f"{type(hook).__name__} feeds values (feed_dict); there are no "
                        "placeholders in a Keras step, so feed_dict hooks are not supported."
                    )
                candidates += tf.nest.flatten(args.fetches)
            final_ops = internals.final_ops(hook)  # FinalOpsHook runs them in end()
            if final_ops is not None:
                candidates += tf.nest.flatten(final_ops)
            for fetch in candidates:
                if fetch is None:
                    continue
                key = self._key_of(fetch)
                if key is None:
                    key = f"hook_{len(outputs)}"
                    outputs[key] = _as_fetchable(fetch, graph)
                    self._keys[fetch_id(fetch)] = key
        return outputs

    def attached_to(self, graph: tf.Graph) -> bool:
        """True once `attach` ran in `graph` (another replica of the same trace)."""
        return self._graph is graph

    def outputs_like_first(self) -> dict:
        """Zeros shaped like the last attach's outputs (for replicas other than the first)."""
        return {
            key: tf.zeros([d or 0 for d in t.shape.as_list()] if t.shape.rank is not None
                          else [0], t.dtype)
            for key, t in getattr(self, "_first_outputs", {}).items()
        }  # fmt: skip

    def _key_of(self, fetch: Any) -> str | None:
        return self._keys.get(fetch_id(fetch))

    def restart(self) -> bool:
        """For another call on the same trace: begin() the hooks again in the traced graph.

        True when their first before_run() asks only for what the step already returns
        (then the trace is reused); False when the step must be traced again.
        """
        self._pending = False  # a before_run left over from the last call is void
        context = _V1.train.SessionRunContext(_V1.train.SessionRunArgs(None), self.session)
        with (
            self._graph.as_default(),
            variables_resolvable_by_name(self._graph),
        ):
            for hook in self.hooks:
                hook.begin()
                args = _checked_args(hook, hook.before_run(context))
                fetches = [] if args is None else tf.nest.flatten(args.fetches)
                if any(f is not None and self._key_of(f) is None for f in fetches):
                    return False
        return True

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
        while quiet < limit:
            self.before_step()
            if any(f is not None for fetches in self._requests for f in tf.nest.flatten(fetches)):
                self._pending = True
                break
            for hook in self.hooks:
                calls = self.session.calls
                hook.after_run(self._context, _V1.train.SessionRunValues(None, None, None))
                if self.session.calls != calls:
                    self._session_readers.add(id(hook))  # from now on, real steps only
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

    def before_step(self) -> None:
        self._context = _V1.train.SessionRunContext(_V1.train.SessionRunArgs(None), self.session)
        self._requests = []
        for hook in self.hooks:
            args = _checked_args(hook, hook.before_run(self._context))
            fetches = None if args is None else args.fetches
            for fetch in tf.nest.flatten(fetches):
                if fetch is not None and self._key_of(fetch) is None:
                    raise ValueError(
                        f"{type(hook).__name__} asked to fetch {fetch!r}, which it did not ask "
                        "for on the first step. keras_estimator compiles hook fetches into the "
                        "step once; expected a hook that fetches the same tensors each time."
                    )
            self._requests.append(fetches)

    def after_step(self, values: dict) -> bool:
        """Feeds the step's values to the hooks; True when one of them requested a stop."""
        self.session.last_values = {
            key_id: values[key] for key_id, key in self._keys.items() if key in values
        }
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
        for hook in self.hooks:
            hook.end(self.session)
