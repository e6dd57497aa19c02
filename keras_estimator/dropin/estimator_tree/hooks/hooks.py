"""2.15's `hooks/hooks.py`: `InMemoryEvaluatorHook` and the stop-at-checkpoint hook."""

from keras_estimator.experimental.in_memory_evaluator import InMemoryEvaluatorHook
from keras_estimator.experimental.stop_at_checkpoint_step import (
    StopAtCheckpointStepHook as _StopAtCheckpointStepHook,
)
from keras_estimator.experimental.stop_at_checkpoint_step import (
    make_stop_at_checkpoint_step_hook,
)

__all__ = [
    "InMemoryEvaluatorHook",
    "_StopAtCheckpointStepHook",
    "make_stop_at_checkpoint_step_hook",
]
