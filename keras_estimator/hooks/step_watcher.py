"""StepWatcher: the one watched step of every call, for SessionRunHooks and Keras callbacks.

A train(), evaluate() or predict() call is watched when it has hooks (the caller's or the
EstimatorSpec's) or Keras callbacks. A watched step runs alone: the hooks' `before_run`
and the callbacks' `on_*_batch_begin`, the step with what the hooks fetch, then
`after_run` and `on_*_batch_end` — in that order, in every mode, as Keras' CallbackList
drives `fit()` and tf.estimator's MonitoredSession drove its hooks. `end()` ends the
callbacks, then the hooks, even when a callback raises.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tensorflow as tf

from keras_estimator.engine.output_keys import HOOKS_KEY
from keras_estimator.hooks.keras_callbacks import KerasCallbacks
from keras_estimator.hooks.runner import HookRunner

# What a watched step's run returns: (ran, outputs, hook values by fetch key).
StepRun = Callable[[dict], tuple[bool, Any, dict]]


def hook_values(outputs: dict) -> dict:
    """The values a loop's outputs hold for the hooks' fetches, by fetch key."""
    return {key: value.numpy() for key, value in outputs.get(HOOKS_KEY, {}).items()}


def scalar_logs(outputs: dict) -> dict[str, float]:
    """A step's scalar numbers (the hooks' fetches left out): what callbacks get as logs.
    A string metric (a serialized Summary, AdaNet's architecture) is for the event file."""
    return {
        key: float(value)
        for key, value in outputs.items()
        if key != HOOKS_KEY
        and tf.is_tensor(value)
        and value.shape.rank == 0
        and value.dtype != tf.string
    }


class StepWatcher:
    """The hooks and Keras callbacks of one call (see the module doc).

    Args:
        runner: the call's SessionRunHooks (its own and the EstimatorSpec's).
        callbacks: the call's Keras callbacks.
        model: the model the callbacks see.
        kind: "train", "test" or "predict", as Keras names the loops.
        steps: the call's number of steps when known (the callbacks' `params["steps"]`).
    """

    def __init__(
        self, runner: HookRunner, callbacks: list, model: Any, kind: str, steps: int | None = None
    ) -> None:
        self.runner = runner
        self.callbacks = KerasCallbacks(callbacks, model, kind, steps)

    @property
    def active(self) -> bool:
        """True when something watches the steps (they then run one by one)."""
        return self.runner.active or self.callbacks.active

    def begin(self) -> None:
        """Once the variables are restored: after_create_session, then on_*_begin."""
        self.runner.after_create_session()
        self.callbacks.begin()

    def quiet_steps(self, limit: int) -> int:
        """How many of the next `limit` steps can run as one chunk while the hooks are
        walked through them (HookRunner.quiet_steps); 0 when callbacks watch every step."""
        if limit <= 1 or self.callbacks.active or not self.runner.active:
            return 0
        return self.runner.quiet_steps(limit)

    def step(self, batch: int, run: StepRun, batch_logs: Callable[[Any], dict]) -> tuple[Any, bool]:
        """Runs one watched step; returns `(outputs, stop)`.

        `run(fetches)` runs the step with the hooks' fetches and returns `(ran, outputs,
        hook values)`; when it ran nothing (the input ended inside it) the hooks get no
        after_run, as tf.estimator's OutOfRangeError skipped it, and `outputs` is None.
        `stop`: a hook requested a stop, or a callback set `model.stop_training`.
        """
        if self.runner.active:
            self.runner.prepare_step()
        self.callbacks.batch_begin(batch)
        ran, outputs, values = run(self.runner.fetch_tensors())
        if not ran:
            return None, True
        stop = self.runner.after_step(values) if self.runner.active else False
        stop = self.callbacks.batch_end(batch, batch_logs(outputs)) or stop
        return outputs, stop

    def input_ended(self) -> None:
        """The input ended before a step: 2.15 called the hooks' before_run once more (the
        session run that met the OutOfRangeError), then no after_run."""
        if self.runner.active:
            self.runner.before_step()

    def end(self, logs: dict) -> None:
        """on_*_end of the callbacks, then end() of the hooks (also if a callback raises)."""
        try:
            self.callbacks.end(logs)
        finally:
            self.runner.end()
