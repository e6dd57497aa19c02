"""`tf.contrib.tpu`: TPUEstimator and its configuration, from `keras_estimator.tpu`."""

from __future__ import annotations

import logging
from typing import Any

from keras_estimator.dropin.contrib.removed import removed_attribute_getattr
from keras_estimator.tpu import (
    InputPipelineConfig,
    RunConfig,
    TPUConfig,
    TPUEstimator,
    TPUEstimatorSpec,
)

logger = logging.getLogger("keras_estimator")


def CrossShardOptimizer(
    optimizer: Any,
    reduction: Any = None,
    name: str = "CrossShardOptimizer",
    group_assignment: Any = None,
) -> Any:  # noqa: N802  (TF1's name)
    """Returns `optimizer` itself: under a TPUStrategy (or any tf.distribute strategy) the
    engine already averages gradients across replicas, which is what this wrapper did."""
    logger.info(
        "tf.contrib.tpu.CrossShardOptimizer: using %s as is; the distribution strategy "
        "aggregates gradients across replicas.",
        type(optimizer).__name__,
    )
    return optimizer


__getattr__ = removed_attribute_getattr("tpu", "tf.estimator.tpu / tf.distribute.TPUStrategy")


__all__ = [
    "CrossShardOptimizer",
    "InputPipelineConfig",
    "RunConfig",
    "TPUConfig",
    "TPUEstimator",
    "TPUEstimatorSpec",
]
