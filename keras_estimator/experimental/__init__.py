"""`tf.estimator.experimental`: early stopping and related helpers."""

from keras_estimator.experimental.early_stopping import (
    make_early_stopping_hook,
    read_eval_metrics,
    stop_if_higher_hook,
    stop_if_lower_hook,
    stop_if_no_decrease_hook,
    stop_if_no_increase_hook,
)
from keras_estimator.experimental.in_memory_evaluator import InMemoryEvaluatorHook
from keras_estimator.experimental.stop_at_checkpoint_step import (
    make_stop_at_checkpoint_step_hook,
)

__all__ = [
    "InMemoryEvaluatorHook",
    "make_early_stopping_hook",
    "make_stop_at_checkpoint_step_hook",
    "read_eval_metrics",
    "stop_if_higher_hook",
    "stop_if_lower_hook",
    "stop_if_no_decrease_hook",
    "stop_if_no_increase_hook",
]
