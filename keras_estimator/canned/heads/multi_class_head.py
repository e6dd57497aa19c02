"""MultiClassHead: n_classes logits per example, softmax cross-entropy."""

from __future__ import annotations

from typing import Any

import keras
import tensorflow as tf

from keras_estimator.canned.heads import base_head as base
from keras_estimator.canned.heads import class_labels


class MultiClassHead(base.Head):
    """One of `n_classes` classes per example, as `tf.estimator.MultiClassHead`.

    Args:
        n_classes: Number of classes, > 2 (use BinaryClassHead for two).
        weight_column: A feature key or numeric column weighting each example.
        label_vocabulary: Class names, when labels are strings.
        loss_reduction: `"sum_over_batch_size"` (default) or `"sum"`.
        loss_fn: Optional `loss_fn(labels, logits)` of per-example losses.
        name: Suffix of the metric keys.

    Example:
        >>> head = MultiClassHead(n_classes=3)
        >>> spec = head.create_estimator_spec(features, mode, logits, labels, optimizer="Adam")
    """

    def __init__(
        self,
        n_classes: int,
        weight_column: Any = None,
        label_vocabulary: list[str] | None = None,
        loss_reduction: Any = base.SUM_OVER_BATCH_SIZE,
        loss_fn: Any = None,
        name: str | None = None,
    ) -> None:
        if n_classes is None or n_classes <= 2:
            raise ValueError(f"n_classes must be > 2: {n_classes}.")
        super().__init__(weight_column, loss_reduction, loss_fn, name)
        self._n_classes = n_classes
        self._vocabulary = class_labels.check_vocabulary(label_vocabulary, n_classes)

    @property
    def logits_dimension(self) -> int:
        return self._n_classes

    def _processed_labels(self, logits: tf.Tensor, labels: Any) -> tf.Tensor:
        return class_labels.class_ids(labels, self._n_classes, self._vocabulary)

    def _unweighted_loss(self, labels: tf.Tensor, logits: tf.Tensor) -> tf.Tensor:
        loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels[:, 0], logits=logits)
        return loss[:, tf.newaxis]

    def predictions(self, logits: tf.Tensor, keys: list | None = None) -> dict:
        logits = self._check_logits(logits)
        with tf.name_scope("predictions"):
            ids = tf.argmax(logits, axis=-1, output_type=tf.int64)[..., tf.newaxis]
            all_ids, all_names = class_labels.all_classes(logits, self._n_classes,
                                                          self._vocabulary)  # fmt: skip
            predictions = {
                base.LOGITS: logits,
                base.PROBABILITIES: tf.nn.softmax(logits, name=base.PROBABILITIES),
                base.CLASS_IDS: ids,
                base.CLASSES: class_labels.class_names(ids, self._n_classes, self._vocabulary),
                base.ALL_CLASS_IDS: all_ids,
                base.ALL_CLASSES: all_names,
            }
        return {k: v for k, v in predictions.items() if keys is None or k in keys}

    def _eval_metrics(self, labels, logits, predictions, weights, unweighted) -> dict:
        return {
            base.LOSS_MEAN: base.weighted_mean(base.LOSS_MEAN, unweighted, weights),
            base.ACCURACY: base.updated(
                keras.metrics.Accuracy(name=base.ACCURACY),
                labels,
                predictions[base.CLASS_IDS],
                weights,
            ),  # fmt: skip
        }

    def _export_outputs(self, predictions: dict) -> dict:
        return base.classification_export_outputs(predictions)
