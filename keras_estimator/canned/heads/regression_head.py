"""RegressionHead and its Poisson / logistic variants: real-valued targets."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tensorflow as tf

from keras_estimator.canned.heads import base_head as base
from keras_estimator.export.export_outputs import PredictOutput, RegressionOutput


class RegressionHead(base.Head):
    """`label_dimension` real values per example, squared error by default.

    Args:
        label_dimension: Values per example.
        weight_column: A feature key or numeric column weighting each example.
        loss_reduction: `"sum_over_batch_size"` (default) or `"sum"`.
        loss_fn: Optional `loss_fn(labels, logits)` of per-example losses.
        inverse_link_fn: Maps logits to predictions (identity by default).
        name: Suffix of the metric keys.

    Example:
        >>> head = RegressionHead(label_dimension=2)
        >>> spec = head.create_estimator_spec(features, mode, logits, labels, optimizer="Adam")
    """

    _weights_per_dimension = True

    def __init__(
        self,
        label_dimension: int = 1,
        weight_column: Any = None,
        loss_reduction: Any = base.SUM_OVER_BATCH_SIZE,
        loss_fn: Callable | None = None,
        inverse_link_fn: Callable | None = None,
        name: str | None = None,
    ) -> None:
        if label_dimension < 1:
            raise ValueError(f"Invalid label_dimension {label_dimension}.")
        super().__init__(weight_column, loss_reduction, loss_fn, name)
        self._label_dimension = label_dimension
        self._inverse_link_fn = inverse_link_fn

    @property
    def logits_dimension(self) -> int:
        return self._label_dimension

    def _processed_labels(self, logits: tf.Tensor, labels: Any) -> tf.Tensor:
        labels = base.as_column(labels, tf.float32)
        self._check_label_shape(labels, self._label_dimension)
        return labels

    def _unweighted_loss(self, labels: tf.Tensor, logits: tf.Tensor) -> tf.Tensor:
        return tf.square(logits - labels)

    def _predicted(self, logits: tf.Tensor) -> tf.Tensor:
        return self._inverse_link_fn(logits) if self._inverse_link_fn else logits

    def predictions(self, logits: tf.Tensor, keys: list | None = None) -> dict:
        logits = self._check_logits(logits)
        with tf.name_scope("predictions"):
            predictions = {base.PREDICTIONS: tf.identity(self._predicted(logits),
                                                         name=base.PREDICTIONS)}  # fmt: skip
            if self._inverse_link_fn is not None:
                predictions[base.LOGITS] = logits
        return {k: v for k, v in predictions.items() if keys is None or k in keys}

    def _eval_metrics(self, labels, logits, predictions, weights, unweighted) -> dict:
        return {
            base.LOSS_MEAN: base.weighted_mean(base.LOSS_MEAN, unweighted, weights),
            base.PREDICTION_MEAN: base.weighted_mean(
                base.PREDICTION_MEAN, predictions[base.PREDICTIONS], weights
            ),
            base.LABEL_MEAN: base.weighted_mean(base.LABEL_MEAN, labels, weights),
        }

    def _export_outputs(self, predictions: dict) -> dict:
        outputs: dict[str, Any] = {}
        if self._label_dimension == 1:
            regression = RegressionOutput(value=predictions[base.PREDICTIONS])
            outputs = {base.SERVING_DEFAULT: regression, base.REGRESS: regression}
        else:
            outputs = {base.SERVING_DEFAULT: PredictOutput(predictions)}
        outputs[base.PREDICT] = PredictOutput(predictions)
        return outputs


class PoissonRegressionHead(RegressionHead):
    """Counts: Poisson loss on log-rates; predictions are `exp(logits)`.

    With `compute_full_loss` (default) the loss includes Stirling's term for labels > 1.
    """

    def __init__(self, label_dimension: int = 1, weight_column: Any = None,
                 loss_reduction: Any = base.SUM_OVER_BATCH_SIZE, compute_full_loss: bool = True,
                 name: str | None = None) -> None:  # fmt: skip
        def loss_fn(labels: tf.Tensor, logits: tf.Tensor) -> tf.Tensor:
            return tf.nn.log_poisson_loss(labels, logits, compute_full_loss=compute_full_loss)

        super().__init__(label_dimension, weight_column, loss_reduction, loss_fn, tf.exp, name)


class LogisticRegressionHead(RegressionHead):
    """Targets in [0, 1]: sigmoid cross-entropy; predictions are `sigmoid(logits)`."""

    def __init__(self, weight_column: Any = None,
                 loss_reduction: Any = base.SUM_OVER_BATCH_SIZE,
                 name: str | None = None) -> None:  # fmt: skip
        def loss_fn(labels: tf.Tensor, logits: tf.Tensor) -> tf.Tensor:
            message = "Labels must be in range [0, 1]"
            checks = [
                tf.debugging.assert_non_negative(labels, message=message),
                tf.debugging.assert_less_equal(labels, 1.0, message=message),
            ]
            with tf.control_dependencies(checks):
                return tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits)

        super().__init__(1, weight_column, loss_reduction, loss_fn, tf.sigmoid, name)
