"""2.15's `early_stopping` (`tf.estimator.experimental.stop_if_*`), with its hooks.

`_MultiWorkerEarlyStoppingHook` is the predicate hook here: a stop one worker requests
reaches the others through keras_estimator's multi-worker stop vote
(distribute/step_agreement.py), where 2.15 used a shared variable.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tensorflow as tf

from keras_estimator.experimental.early_stopping import (
    _no_improvement_hook,
    _StopWhenHook,
    _threshold_hook,
    make_early_stopping_hook,
    read_eval_metrics,
    stop_if_higher_hook,
    stop_if_lower_hook,
    stop_if_no_decrease_hook,
    stop_if_no_increase_hook,
)

_V1 = tf.compat.v1
_STOP_VAR_NAME = "signal_early_stopping"

__all__ = [
    "make_early_stopping_hook",
    "read_eval_metrics",
    "stop_if_higher_hook",
    "stop_if_lower_hook",
    "stop_if_no_decrease_hook",
    "stop_if_no_increase_hook",
]


class _StopOnPredicateHook(_StopWhenHook):
    """Requests a stop once `should_stop_fn()` is true, checked every `run_every_secs`
    seconds or `run_every_steps` steps."""

    def __init__(
        self,
        should_stop_fn: Callable[[], bool],
        run_every_secs: Any = 60,
        run_every_steps: Any = None,
    ) -> None:
        super().__init__(should_stop_fn, run_every_secs, run_every_steps)


class _MultiWorkerEarlyStoppingHook(_StopOnPredicateHook):
    """The chief's early-stopping hook under multi-worker training (see the module doc)."""

    def __init__(self, should_stop_fn: Callable[[], bool], run_every_steps: Any = None) -> None:
        super().__init__(should_stop_fn, None, run_every_steps)


def _get_or_create_stop_var() -> Any:
    """The graph's boolean `signal_early_stopping` variable, made on first use."""
    with _V1.variable_scope(name_or_scope="", use_resource=True, reuse=_V1.AUTO_REUSE):
        return _V1.get_variable(
            name=_STOP_VAR_NAME,
            shape=[],
            dtype=tf.bool,
            initializer=_V1.constant_initializer(False),
            collections=[_V1.GraphKeys.GLOBAL_VARIABLES],
            trainable=False,
        )


class _CheckForStoppingHook(tf.compat.v1.train.SessionRunHook):
    """Requests a stop once the graph's `signal_early_stopping` variable is true."""

    def begin(self) -> None:
        self._stop_var = _get_or_create_stop_var()

    def before_run(self, run_context: Any) -> Any:
        return _V1.train.SessionRunArgs(self._stop_var)

    def after_run(self, run_context: Any, run_values: Any) -> None:
        if run_values.results:
            run_context.request_stop()


def _stop_if_threshold_crossed_hook(
    estimator: Any,
    metric_name: str,
    threshold: float,
    higher_is_better: bool,
    eval_dir: Any,
    min_steps: int,
    run_every_secs: Any,
    run_every_steps: Any,
) -> Any:
    return _threshold_hook(
        estimator,
        metric_name,
        threshold,
        higher_is_better,
        eval_dir,
        min_steps,
        run_every_secs,
        run_every_steps,
    )


def _stop_if_no_metric_improvement_hook(
    estimator: Any,
    metric_name: str,
    max_steps_without_improvement: int,
    higher_is_better: bool,
    eval_dir: Any,
    min_steps: int,
    run_every_secs: Any,
    run_every_steps: Any,
) -> Any:
    return _no_improvement_hook(
        estimator,
        metric_name,
        max_steps_without_improvement,
        higher_is_better,
        eval_dir,
        min_steps,
        run_every_secs,
        run_every_steps,
    )


def _summaries(eval_dir: str) -> Any:
    """Each evaluation's event: (global step, {tag: value}) from `eval_dir`, in order."""
    return iter(read_eval_metrics(eval_dir).items())
