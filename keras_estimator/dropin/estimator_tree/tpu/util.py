"""2.15's `tpu.util`: parsing `TPUConfig.iterations_per_loop`, and the dataset-initializer
hook.

Every name works: `parse_iterations_per_loop` is keras_estimator's (its result has 2.15's
`value` and `unit` fields), and `MultiHostDatasetInitializerHook` runs on our hook loop.
"""

from typing import Any

import numpy as np

from keras_estimator.tpu.tpu_config import IterationsPerLoop as IterationsPerLoopCounter
from keras_estimator.tpu.tpu_config import parse_iterations_per_loop
from keras_estimator.tpu.tpu_hooks import MultiHostDatasetInitializerHook


def check_positive_integer(value: Any, name: str) -> None:
    """Checks that `value` is a positive integer (a Python or NumPy int).

    Raises:
        TypeError: If `value` is not an integer.
        ValueError: If it is not positive.
    """
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be int, got {type(value)}")
    if value <= 0:
        raise ValueError(f"{name} must be positive, got {value}")


__all__ = [
    "IterationsPerLoopCounter",
    "MultiHostDatasetInitializerHook",
    "check_positive_integer",
    "parse_iterations_per_loop",
]
