"""tf.compat.v1.estimator's BaselineClassifier / BaselineRegressor / BaselineEstimator.

A learned `baseline/bias`, its loss summed over the batch, trained by a
`tf.compat.v1.train` optimizer (Ftrl at 0.3 for a name) whose slots are
`baseline/bias/Ftrl` and `baseline/bias/Ftrl_1`, as tf.estimator 2.15 saved them.
"""

from __future__ import annotations

import os
from typing import Any

import tensorflow as tf

from keras_estimator.canned.baseline import baseline_logits
from keras_estimator.canned.v1 import heads, optimizers, slot_names
from keras_estimator.estimator.estimator_v1 import Estimator
from keras_estimator.spec.run_config import RunConfig

_V1 = tf.compat.v1
_LEARNING_RATE = 0.3  # tf.estimator 2.15's rate for a named optimizer


class _BaselineEstimatorV1(Estimator):
    def __init__(self, head, model_dir, optimizer, config) -> None:
        optimizers.check_optimizer_name(optimizer)
        self._head = head

        def model_fn(features, labels, mode):
            logits = baseline_logits(features, head.logits_dimension)

            def train_op_fn(loss: tf.Tensor) -> tf.Operation:
                resolved = optimizers.get_optimizer_instance(optimizer, _LEARNING_RATE)
                return resolved.minimize(loss, global_step=_V1.train.get_global_step())

            return slot_names.spec_with_v1_slot_names(
                head, features, mode, logits, labels, partitioned=False, train_op_fn=train_op_fn
            )

        super().__init__(model_fn, model_dir, config)


class BaselineClassifier(_BaselineEstimatorV1):
    """`tf.compat.v1.estimator.BaselineClassifier`: the training labels' class
    distribution, loss summed over the batch.

    Example:
        >>> from keras_estimator import v1 as estimator
        >>> est = estimator.BaselineClassifier(n_classes=3)
    """

    def __init__(
        self,
        model_dir: str | os.PathLike | None = None,
        n_classes: int = 2,
        weight_column: Any = None,
        label_vocabulary: list[str] | None = None,
        optimizer: Any = "Ftrl",
        config: RunConfig | None = None,
        loss_reduction: str = heads.SUM,
    ) -> None:
        head = heads.classification_head(n_classes, weight_column, label_vocabulary,
                                         loss_reduction)  # fmt: skip
        super().__init__(head, model_dir, optimizer, config)


class BaselineRegressor(_BaselineEstimatorV1):
    """`tf.compat.v1.estimator.BaselineRegressor`: the training labels' mean.

    Example:
        >>> est = estimator.BaselineRegressor()
    """

    def __init__(
        self,
        model_dir: str | os.PathLike | None = None,
        label_dimension: int = 1,
        weight_column: Any = None,
        optimizer: Any = "Ftrl",
        config: RunConfig | None = None,
        loss_reduction: str = heads.SUM,
    ) -> None:
        head = heads.regression_head(label_dimension, weight_column, loss_reduction)
        super().__init__(head, model_dir, optimizer, config)


class BaselineEstimator(_BaselineEstimatorV1):
    """`tf.compat.v1.estimator.BaselineEstimator`: a learned bias through a given head.

    Example:
        >>> est = estimator.BaselineEstimator(head)
    """

    def __init__(
        self,
        head: Any,
        model_dir: str | os.PathLike | None = None,
        optimizer: Any = "Ftrl",
        config: RunConfig | None = None,
    ) -> None:
        super().__init__(head, model_dir, optimizer, config)
