"""Early stopping on evaluation metrics read back from the eval event files.

Same contract as `tf.estimator.experimental.stop_if_*_hook`: a SessionRunHook that, every
`run_every_steps` steps or `run_every_secs` seconds, reads the metrics written by
`Estimator.evaluate` (model_dir/eval) and requests a stop when a predicate holds.
"""

from __future__ import annotations

import collections
import logging
import operator
from collections.abc import Callable
from typing import Any

import tensorflow as tf

from keras_estimator.runtime.event_files import ScalarReader, read_scalars

logger = logging.getLogger("keras_estimator")
_V1 = tf.compat.v1


def read_eval_metrics(eval_dir: str) -> collections.OrderedDict:
    """`{global_step: {metric: value}}` from the event files in `eval_dir`, by step.

    Example:
        >>> read_eval_metrics(estimator.eval_dir())[1000]["accuracy"]
    """
    return read_scalars(eval_dir)


class _StopWhenHook(tf.compat.v1.train.SessionRunHook):
    """Requests a stop once `should_stop_fn()` is true, checked on a step/second timer."""

    def __init__(self, should_stop_fn: Callable[[], bool], every_secs: Any, every_steps: Any):
        if not callable(should_stop_fn):
            raise TypeError("`should_stop_fn` must be callable.")
        self._should_stop_fn = should_stop_fn
        self._timer = _V1.train.SecondOrStepTimer(every_secs=every_secs, every_steps=every_steps)

    def begin(self) -> None:
        self._global_step = _V1.train.get_global_step()

    def before_run(self, run_context: Any) -> Any:
        return _V1.train.SessionRunArgs(self._global_step)

    def after_run(self, run_context: Any, run_values: Any) -> None:
        step = int(run_values.results)
        if not self._timer.should_trigger_for_step(step):
            return
        self._timer.update_last_triggered_step(step)
        if self._should_stop_fn():
            logger.info("Requesting early stopping at global step %d", step)
            run_context.request_stop()


def make_early_stopping_hook(
    estimator: Any,
    should_stop_fn: Callable[[], bool],
    run_every_secs: float | None = 60,
    run_every_steps: int | None = None,
) -> tf.compat.v1.train.SessionRunHook:
    """A hook that stops training when `should_stop_fn()` returns True.

    Example:
        >>> hook = make_early_stopping_hook(est, lambda: read_eval_metrics(est.eval_dir()))
    """
    from keras_estimator.estimator.estimator import Estimator

    if not isinstance(estimator, Estimator):
        raise TypeError(
            f"`estimator` must have type `tf.estimator.Estimator`. Got: {type(estimator)}"
        )
    if run_every_secs is not None and run_every_steps is not None:
        raise ValueError(
            "Only one of `run_every_secs` and `run_every_steps` must be set. Got "
            f"run_every_secs={run_every_secs}, run_every_steps={run_every_steps}."
        )
    return _StopWhenHook(should_stop_fn, run_every_secs, run_every_steps)


def _threshold_hook(
    estimator: Any, metric_name: str, threshold: float, higher: bool, eval_dir: Any, min_steps: int,
    run_every_secs: Any, run_every_steps: Any,
) -> tf.compat.v1.train.SessionRunHook:  # fmt: skip
    directory = eval_dir or estimator.eval_dir()
    crossed = operator.gt if higher else operator.lt
    event_files = ScalarReader()  # the hook's polls read only what changed

    def should_stop() -> bool:
        for step, metrics in event_files.read(directory).items():
            if step >= min_steps and crossed(metrics[metric_name], threshold):
                logger.info(
                    'At step %s, metric "%s" has value %s which is %s the configured '
                    "threshold (%s) for early stopping.",
                    step, metric_name, metrics[metric_name],
                    "greater than" if higher else "less than", threshold,
                )  # fmt: skip
                return True
        return False

    return make_early_stopping_hook(estimator, should_stop, run_every_secs, run_every_steps)


def _no_improvement_hook(
    estimator: Any, metric_name: str, patience: int, higher: bool, eval_dir: Any, min_steps: int,
    run_every_secs: Any, run_every_steps: Any,
) -> tf.compat.v1.train.SessionRunHook:  # fmt: skip
    directory = eval_dir or estimator.eval_dir()
    better = operator.gt if higher else operator.lt
    event_files = ScalarReader()  # the hook's polls read only what changed

    def should_stop() -> bool:
        best_value = best_step = None
        for step, metrics in event_files.read(directory).items():
            if step < min_steps:
                continue
            value = metrics[metric_name]
            if best_value is None or better(value, best_value):
                best_value, best_step = value, step
            if step - best_step >= patience:
                logger.info(
                    'No %s in metric "%s" for %s steps, which is greater than or equal to '
                    "max steps (%s) configured for early stopping.",
                    "increase" if higher else "decrease", metric_name, step - best_step, patience,
                )  # fmt: skip
                return True
        return False

    return make_early_stopping_hook(estimator, should_stop, run_every_secs, run_every_steps)


def stop_if_higher_hook(estimator, metric_name, threshold, eval_dir=None, min_steps=0,
                        run_every_secs=60, run_every_steps=None):  # fmt: skip
    """Stops training once `metric_name` in the eval results is above `threshold`."""
    return _threshold_hook(estimator, metric_name, threshold, True, eval_dir, min_steps,
                           run_every_secs, run_every_steps)  # fmt: skip


def stop_if_lower_hook(estimator, metric_name, threshold, eval_dir=None, min_steps=0,
                       run_every_secs=60, run_every_steps=None):  # fmt: skip
    """Stops training once `metric_name` in the eval results is below `threshold`."""
    return _threshold_hook(estimator, metric_name, threshold, False, eval_dir, min_steps,
                           run_every_secs, run_every_steps)  # fmt: skip


def stop_if_no_increase_hook(estimator, metric_name, max_steps_without_increase, eval_dir=None,
                             min_steps=0, run_every_secs=60, run_every_steps=None):  # fmt: skip
    """Stops training when `metric_name` has not increased for that many steps."""
    return _no_improvement_hook(estimator, metric_name, max_steps_without_increase, True,
                                eval_dir, min_steps, run_every_secs, run_every_steps)  # fmt: skip


def stop_if_no_decrease_hook(estimator, metric_name, max_steps_without_decrease, eval_dir=None,
                             min_steps=0, run_every_secs=60, run_every_steps=None):  # fmt: skip
    """Stops training when `metric_name` has not decreased for that many steps."""
    return _no_improvement_hook(estimator, metric_name, max_steps_without_decrease, False,
                                eval_dir, min_steps, run_every_secs, run_every_steps)  # fmt: skip
