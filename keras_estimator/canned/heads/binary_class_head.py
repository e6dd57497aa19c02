"""BinaryClassHead: one logit per example, sigmoid cross-entropy."""

from __future__ import annotations

from typing import Any

import keras
import tensorflow as tf

from keras_estimator.canned.heads import base_head as base
from keras_estimator.canned.heads import class_labels
from keras_estimator.export.export_outputs import RegressionOutput


class BinaryClassHead(base.Head):
    """Two classes from one logit, as `tf.estimator.BinaryClassHead`.

    Args:
        weight_column: A feature key or numeric column weighting each example.
        thresholds: Extra thresholds for accuracy / precision / recall metrics.
        label_vocabulary: Two class names, when labels are strings.
        loss_reduction: `"sum_over_batch_size"` (default) or `"sum"`.
        loss_fn: Optional `loss_fn(labels, logits)` of per-example losses.
        name: Suffix of the metric keys.

    Example:
        >>> head = BinaryClassHead()
        >>> spec = head.create_estimator_spec(features, mode, logits, labels, optimizer="Adam")
    """

    logits_dimension = 1

    def __init__(
        self,
        weight_column: Any = None,
        thresholds: list[float] | None = None,
        label_vocabulary: list[str] | None = None,
        loss_reduction: Any = base.SUM_OVER_BATCH_SIZE,
        loss_fn: Any = None,
        name: str | None = None,
    ) -> None:
        super().__init__(weight_column, loss_reduction, loss_fn, name)
        self._thresholds = tuple(thresholds or ())
        for threshold in self._thresholds:
            if not 0.0 < threshold < 1.0:
                raise ValueError(f"thresholds not in (0, 1): {thresholds}.")
        self._vocabulary = class_labels.check_vocabulary(label_vocabulary, 2)

    def _processed_labels(self, logits: tf.Tensor, labels: Any) -> tf.Tensor:
        """[batch, 1] float labels: class ids, or soft labels in [0, 1] kept as they are."""
        column = base.as_column(labels)
        if self._vocabulary is None and column.dtype.is_floating:
            self._check_label_shape(column, 1)
            checks = [
                tf.debugging.assert_less_equal(column, tf.cast(1, column.dtype),
                                               message="Labels must be <= n_classes - 1"),
                tf.debugging.assert_non_negative(column, message="Labels must be >= 0."),
            ]  # fmt: skip
            with tf.control_dependencies(checks):
                return tf.cast(column, tf.float32)
        return tf.cast(class_labels.class_ids(labels, 2, self._vocabulary), tf.float32)

    def _unweighted_loss(self, labels: tf.Tensor, logits: tf.Tensor) -> tf.Tensor:
        return tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits)

    def predictions(self, logits: tf.Tensor, keys: list | None = None) -> dict:
        logits = self._check_logits(logits)
        with tf.name_scope("predictions"):
            two_class = tf.concat([tf.zeros_like(logits), logits], axis=-1)
            ids = tf.argmax(two_class, axis=-1, output_type=tf.int64)[..., tf.newaxis]
            all_ids, all_names = class_labels.all_classes(logits, 2, self._vocabulary)
            predictions = {
                base.LOGITS: logits,
                base.LOGISTIC: tf.sigmoid(logits, name=base.LOGISTIC),
                base.PROBABILITIES: tf.nn.softmax(two_class, name=base.PROBABILITIES),
                base.CLASS_IDS: ids,
                base.CLASSES: class_labels.class_names(ids, 2, self._vocabulary),
                base.ALL_CLASS_IDS: all_ids,
                base.ALL_CLASSES: all_names,
            }
        return {k: v for k, v in predictions.items() if keys is None or k in keys}

    def _eval_metrics(self, labels, logits, predictions, weights, unweighted) -> dict:
        labels_f = tf.cast(labels, tf.float32)
        logistic = predictions[base.LOGISTIC]
        ids = tf.cast(predictions[base.CLASS_IDS], tf.float32)
        auc = keras.metrics.AUC(name=base.AUC, num_thresholds=200)
        auc_pr = keras.metrics.AUC(name=base.AUC_PR, curve="PR", num_thresholds=200)
        metrics: dict[str, Any] = {
            base.LOSS_MEAN: base.weighted_mean(base.LOSS_MEAN, unweighted, weights),
            base.ACCURACY: base.updated(keras.metrics.Accuracy(), labels_f, ids, weights),
            base.PRECISION: base.updated(keras.metrics.Precision(), labels_f, ids, weights),
            base.RECALL: base.updated(keras.metrics.Recall(), labels_f, ids, weights),
            base.PREDICTION_MEAN: base.weighted_mean(base.PREDICTION_MEAN, logistic, weights),
            base.LABEL_MEAN: base.weighted_mean(base.LABEL_MEAN, labels_f, weights),
            base.AUC: base.updated(auc, labels_f, logistic, weights),
            base.AUC_PR: base.updated(auc_pr, labels_f, logistic, weights),
        }
        baseline = base.AccuracyBaseline(name=base.ACCURACY_BASELINE)
        baseline.update_state(labels_f, sample_weight=weights)
        metrics[base.ACCURACY_BASELINE] = baseline
        metrics.update(base.threshold_metrics(self._thresholds, labels_f, logistic, weights))
        return metrics

    def _export_outputs(self, predictions: dict) -> dict:
        regression = RegressionOutput(value=predictions[base.LOGISTIC])
        return base.classification_export_outputs(predictions, **{base.REGRESS: regression})
