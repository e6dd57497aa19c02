"""BaselineClassifier, BaselineRegressor, BaselineEstimator: a learned bias, not the features."""

from __future__ import annotations

import os
from typing import Any

import tensorflow as tf

from keras_estimator.canned import canned_model_fn
from keras_estimator.estimator.estimator import Estimator
from keras_estimator.spec.run_config import RunConfig

_LEARNING_RATE = 0.3  # tf.estimator 2.15's learning rate for a named optimizer


def baseline_logits(features: Any, units: int) -> tf.Tensor:
    """`baseline/bias` broadcast to the batch: the prior (log-odds / mean) it learns."""
    batch_of = features
    if isinstance(features, dict):
        if not features:
            raise ValueError("features must not be empty for a Baseline estimator.")
        batch_of = next(iter(features.values()))
    if isinstance(batch_of, tf.SparseTensor):
        batch = batch_of.dense_shape[0]
    else:
        batch = tf.shape(batch_of, out_type=tf.int64)[0]
    with tf.compat.v1.variable_scope("baseline"):
        bias = tf.compat.v1.get_variable(
            "bias", shape=[units], initializer=tf.compat.v1.zeros_initializer()
        )
    return tf.tile(bias[tf.newaxis, :], tf.stack([batch, tf.constant(1, tf.int64)]))


class _BaselineEstimator(Estimator):
    def __init__(self, head, model_dir, optimizer, config) -> None:
        canned_model_fn.check_optimizer(optimizer)
        self._head = head

        def model_fn(features, labels, mode):
            logits = baseline_logits(features, head.logits_dimension)
            return canned_model_fn.spec_with_optimizers(
                head, features, mode, logits, labels,
                [(optimizer, _LEARNING_RATE, "baseline", False)],
            )  # fmt: skip

        super().__init__(model_fn, model_dir, config)


class BaselineClassifier(_BaselineEstimator):
    """Predicts the class distribution of the training labels, as tf.estimator's.

    Example:
        >>> est = BaselineClassifier(n_classes=3)
    """

    def __init__(
        self,
        model_dir: str | os.PathLike | None = None,
        n_classes: int = 2,
        weight_column: Any = None,
        label_vocabulary: list[str] | None = None,
        optimizer: Any = "Ftrl",
        config: RunConfig | None = None,
        loss_reduction: Any = "sum_over_batch_size",
    ) -> None:
        head = canned_model_fn.classification_head(n_classes, weight_column, label_vocabulary,
                                                   loss_reduction)  # fmt: skip
        super().__init__(head, model_dir, optimizer, config)


class BaselineRegressor(_BaselineEstimator):
    """Predicts the mean of the training labels, as tf.estimator's.

    Example:
        >>> est = BaselineRegressor()
    """

    def __init__(
        self,
        model_dir: str | os.PathLike | None = None,
        label_dimension: int = 1,
        weight_column: Any = None,
        optimizer: Any = "Ftrl",
        config: RunConfig | None = None,
        loss_reduction: Any = "sum_over_batch_size",
    ) -> None:
        head = canned_model_fn.regression_head(label_dimension, weight_column, loss_reduction)
        super().__init__(head, model_dir, optimizer, config)


class BaselineEstimator(_BaselineEstimator):
    """Learns the mean of the labels through any head, as `tf.estimator.BaselineEstimator`.

    The features are ignored but for the batch size; the only weight is `baseline/bias`
    (one per logit), trained by `optimizer` (Ftrl at learning rate 0.3 when named).

    Example:
        >>> est = BaselineEstimator(head=MultiLabelHead(n_classes=3))
        >>> est.train(input_fn, steps=100)
    """

    def __init__(
        self,
        head: Any,
        model_dir: str | os.PathLike | None = None,
        optimizer: Any = "Ftrl",
        config: RunConfig | None = None,
    ) -> None:
        super().__init__(head, model_dir, optimizer, config)
