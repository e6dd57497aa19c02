"""2.15's `training`: `TrainSpec`, `EvalSpec`, `train_and_evaluate`, and the pieces
libraries drive it with (`_TrainingExecutor`, EasyRec's entry point, runs our
`train_and_evaluate` for every task type; `_EvalResult` / `_EvalStatus`;
`_ContinuousEvalListener`; `_StopAtSecsHook`)."""

from __future__ import annotations

import collections
import time
from typing import Any

import tensorflow as tf

from keras_estimator.training.train_and_evaluate import (
    EvalSpec,
    TrainSpec,
    _validate_exporters,
    _validate_hooks,
    _validate_input_fn,
    _validate_saving_listeners,
    train_and_evaluate,
)

_V1 = tf.compat.v1

__all__ = [
    "EvalSpec",
    "TrainSpec",
    "_validate_exporters",
    "_validate_input_fn",
    "_validate_saving_listeners",
    "train_and_evaluate",
]


def _is_google_env() -> bool:
    """False: keras_estimator never runs in Google's internal environment."""
    return False


def _assert_eval_spec(eval_spec: Any) -> None:
    if not isinstance(eval_spec, EvalSpec):
        raise TypeError(
            f"`eval_spec` must have type `tf.estimator.EvalSpec`. Got: {type(eval_spec)}"
        )


class _EvalStatus:
    """The outcome of one look for a checkpoint to evaluate."""

    EVALUATED = "evaluated"
    MISSING_CHECKPOINT = "missing checkpoint"
    NO_NEW_CHECKPOINT = "no new checkpoint"


class _EvalResult(collections.namedtuple("EvalResult", ["status", "metrics", "checkpoint_path"])):
    """(status, metrics, checkpoint_path) of an evaluation; metrics and path only when
    `status` is `_EvalStatus.EVALUATED`."""

    def __new__(cls, status: str, metrics: Any = None, checkpoint_path: Any = None) -> Any:
        if not status:
            raise ValueError("status must not be None or empty.")
        if status == _EvalStatus.EVALUATED:
            if not metrics:
                raise ValueError(f"metrics must be non-empty if status is {status}.")
            if not checkpoint_path:
                raise ValueError(f"checkpoint must be non-empty if status is {status}.")
        elif metrics or checkpoint_path:
            raise ValueError(f"metrics and checkpoint_path must be None if status is {status}.")
        return super().__new__(cls, status, metrics, checkpoint_path)


class _ContinuousEvalListener:
    """Callbacks around each evaluation of a continuous evaluator: returning False stops it."""

    def before_eval(self) -> bool:
        return True

    def after_eval(self, eval_result: _EvalResult) -> bool:
        del eval_result
        return True


class _StopAtSecsHook(tf.compat.v1.train.SessionRunHook):
    """Asks training to stop once `stop_after_secs` seconds passed since the first step."""

    def __init__(self, stop_after_secs: float) -> None:
        self._stop_after_secs = stop_after_secs
        self._start_time: float | None = None

    def before_run(self, run_context: Any) -> None:
        if self._start_time is None:
            self._start_time = time.time()

    def after_run(self, run_context: Any, run_values: Any) -> None:
        del run_values
        assert self._start_time is not None
        if time.time() - self._start_time >= self._stop_after_secs:
            run_context.request_stop()


class _NewCheckpointListenerForEvaluate(tf.compat.v1.train.CheckpointSaverListener):
    """Evaluates after a checkpoint save, at most once per `eval_throttle_secs`.

    Args:
        evaluator: an object with `evaluate_and_export()` returning an `_EvalResult` (and
            optionally `export_results`).
        eval_throttle_secs: the least number of seconds between two evaluations.
        continuous_eval_listener: a `_ContinuousEvalListener` or None.
    """

    def __init__(
        self, evaluator: Any, eval_throttle_secs: float, continuous_eval_listener: Any
    ) -> None:
        self._evaluator = evaluator
        self._eval_throttle_secs = eval_throttle_secs
        self._continuous_eval_listener = continuous_eval_listener or _ContinuousEvalListener()
        self._last_time = 0.0
        self.eval_result: Any = None

    def after_save(self, session: Any, global_step_value: int) -> bool:
        del session, global_step_value
        if time.time() < self._last_time + self._eval_throttle_secs:
            return False
        return self._evaluate()

    def end(self, session: Any, global_step_value: int) -> None:
        del session, global_step_value
        self._evaluate()

    def _evaluate(self) -> bool:
        if not self._continuous_eval_listener.before_eval():
            return True
        self._last_time = time.time()
        self.eval_result = self._evaluator.evaluate_and_export()
        return not self._continuous_eval_listener.after_eval(self.eval_result)


class _TrainingExecutor:
    """Runs one task of `train_and_evaluate`, as 2.15's executor (EasyRec drives it).

    Every `run_*` method is `train_and_evaluate(estimator, train_spec, eval_spec)`, which
    reads the task's role from `RunConfig` / `TF_CONFIG` itself (see its docstring); the
    spec's and the given `train_hooks` train together.

    Example:
        >>> executor = _TrainingExecutor(est, train_spec, eval_spec)
        >>> eval_result, export_results = executor.run()
    """

    def __init__(
        self,
        estimator: Any,
        train_spec: TrainSpec,
        eval_spec: EvalSpec,
        train_hooks: Any = None,
        continuous_eval_listener: Any = None,
    ) -> None:
        if not isinstance(train_spec, TrainSpec):
            raise TypeError(
                f"`train_spec` must have type `tf.estimator.TrainSpec`. Got: {type(train_spec)}"
            )
        _assert_eval_spec(eval_spec)
        self._estimator = estimator
        hooks = tuple(train_spec.hooks) + _validate_hooks(train_hooks)
        self._train_spec = train_spec._replace(hooks=hooks)
        self._eval_spec = eval_spec
        self._continuous_eval_listener = continuous_eval_listener

    @property
    def estimator(self) -> Any:
        return self._estimator

    def run(self) -> Any:
        return train_and_evaluate(self._estimator, self._train_spec, self._eval_spec)

    run_local = run_chief = run_worker = run_master = run_evaluator = run

    def run_ps(self) -> Any:
        raise ValueError(
            "keras_estimator does not run parameter-server tasks through _TrainingExecutor. "
            "Expected a chief, worker, evaluator or local task. Fix: run parameter servers "
            "with tf.distribute's ParameterServerStrategy (RunConfig(train_distribute=...))."
        )
