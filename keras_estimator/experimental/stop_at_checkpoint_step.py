"""`make_stop_at_checkpoint_step_hook`: stop workers once the chief has saved the last step."""

from __future__ import annotations

import time
from typing import Any

import tensorflow as tf

from keras_estimator.checkpoint import checkpoint_files as ckpt_lib
from keras_estimator.engine.graph_scope import global_step_read

_V1 = tf.compat.v1


class StopAtCheckpointStepHook(tf.compat.v1.train.SessionRunHook):
    """Requests a stop once `model_dir`'s latest checkpoint is at `last_step` or later.

    A non-chief worker cannot trust its own step count to know that the final checkpoint
    exists; this hook checks the checkpoint itself, and waits `wait_after_file_check_secs`
    after each check that finds it behind (so many workers do not hammer the file system).
    """

    def __init__(self, model_dir: str, last_step: int, wait_after_file_check_secs: float = 30):
        if last_step is None:
            raise ValueError("last_step must be specified.")
        if model_dir is None:
            raise ValueError("model_dir must be specified.")
        self._model_dir = model_dir
        self._last_step = last_step
        self._wait_secs = wait_after_file_check_secs

    def begin(self) -> None:
        # The step's value before its increment, as StopAtStepHook reads it.
        self._global_step = global_step_read(_V1.get_default_graph())

    def before_run(self, run_context: Any) -> Any:
        return _V1.train.SessionRunArgs(self._global_step)

    def after_run(self, run_context: Any, run_values: Any) -> None:
        # The fetched value is the step just taken; tf.estimator compared its successor.
        if int(run_values.results) + 1 < self._last_step:
            return
        checkpoint = ckpt_lib.latest_checkpoint(self._model_dir)
        saved = int(tf.train.load_variable(checkpoint, "global_step")) if checkpoint else 0
        if saved >= self._last_step:
            run_context.request_stop()
        else:
            time.sleep(self._wait_secs)


def make_stop_at_checkpoint_step_hook(
    estimator: Any, last_step: int, wait_after_file_check_secs: float = 30
) -> tf.compat.v1.train.SessionRunHook:
    """A hook that stops training at `last_step`, as tf.estimator's of the same name.

    The chief stops at the step itself (a `StopAtStepHook`); other workers stop once the
    chief's checkpoint for `last_step` is in `model_dir`.

    Example:
        >>> hook = make_stop_at_checkpoint_step_hook(est, last_step=10000)
        >>> est.train(input_fn, hooks=[hook])
    """
    if estimator.config.is_chief:
        return _V1.train.StopAtStepHook(last_step=last_step)
    return StopAtCheckpointStepHook(estimator.model_dir, last_step, wait_after_file_check_secs)
