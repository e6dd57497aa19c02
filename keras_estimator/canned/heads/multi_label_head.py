"""MultiLabelHead: any subset of n_classes per example, sigmoid cross-entropy per class."""

from __future__ import annotations

from typing import Any

import keras
import tensorflow as tf

from keras_estimator.canned.heads import base_head as base
from keras_estimator.canned.heads import class_labels


class MultiLabelHead(base.Head):
    """Several labels per example, as `tf.estimator.MultiLabelHead`.

    Labels are a multi-hot `[batch, n_classes]` tensor of 0/1, or a SparseTensor of class
    ids (or of vocabulary strings with `label_vocabulary`). The per-example loss is the
    sigmoid cross-entropy averaged over the classes.

    Args:
        n_classes: Number of classes, > 1.
        weight_column: A feature key or numeric column weighting each example.
        thresholds: Extra thresholds for accuracy / precision / recall metrics.
        label_vocabulary: Class names, when labels are strings.
        loss_reduction: `"sum_over_batch_size"` (default) or `"sum"`.
        loss_fn: Optional `loss_fn(labels, logits)` of per-example losses.
        classes_for_class_based_metrics: Class ids (or vocabulary entries) that get their
            own `auc/classN`, `auc_precision_recall/classN` and `probability_mean/classN`.
        name: Suffix of the metric keys.

    Example:
        >>> head = MultiLabelHead(n_classes=4)
    """

    def __init__(
        self,
        n_classes: int,
        weight_column: Any = None,
        thresholds: list[float] | None = None,
        label_vocabulary: list[str] | None = None,
        loss_reduction: Any = base.SUM_OVER_BATCH_SIZE,
        loss_fn: Any = None,
        classes_for_class_based_metrics: list | None = None,
        name: str | None = None,
    ) -> None:
        if n_classes is None or n_classes < 2:
            raise ValueError(f"n_classes must be > 1 for multi-label classification. Given: "
                             f"{n_classes}")  # fmt: skip
        super().__init__(weight_column, loss_reduction, loss_fn, name)
        self._n_classes = n_classes
        self._thresholds = tuple(thresholds or ())
        self._vocabulary = class_labels.check_vocabulary(label_vocabulary, n_classes)
        self._metric_classes = self._class_ids(classes_for_class_based_metrics or [])

    def _class_ids(self, classes: list) -> list[int]:
        ids = []
        for item in classes:
            if isinstance(item, str):
                if self._vocabulary is None or item not in self._vocabulary:
                    raise ValueError(
                        f"classes_for_class_based_metrics has {item!r}, which is not in "
                        f"label_vocabulary {self._vocabulary}."
                    )
                ids.append(self._vocabulary.index(item))
            elif not 0 <= int(item) < self._n_classes:
                raise ValueError(
                    f"classes_for_class_based_metrics must be in [0, {self._n_classes}); "
                    f"given {item}."
                )
            else:
                ids.append(int(item))
        return ids

    @property
    def logits_dimension(self) -> int:
        return self._n_classes

    def _processed_labels(self, logits: tf.Tensor, labels: Any) -> tf.Tensor:
        """Multi-hot [batch, n_classes] float labels, checked at run time."""
        if isinstance(labels, tf.SparseTensor):
            values = labels.values
            if self._vocabulary is not None:
                matches = tf.equal(values[:, None], tf.constant(self._vocabulary)[None, :])
                found = tf.reduce_any(matches, axis=1)
                values = tf.where(
                    found,
                    tf.argmax(tf.cast(matches, tf.int32), axis=1, output_type=tf.int64),
                    tf.constant(-1, tf.int64),
                )
            values = tf.cast(values, tf.int64)
            message = (
                f"labels must be an integer SparseTensor with values in [0, {self._n_classes})"
                + (f" (entries of label_vocabulary {self._vocabulary})" if self._vocabulary
                   else "")
            )  # fmt: skip
            checks = [
                tf.debugging.assert_non_negative(values, message=message),
                tf.debugging.assert_less(values, tf.constant(self._n_classes, tf.int64),
                                         message=message),
            ]  # fmt: skip
            with tf.control_dependencies(checks):
                ids = tf.SparseTensor(labels.indices, tf.identity(values), labels.dense_shape)
            return tf.reduce_max(
                tf.one_hot(tf.sparse.to_dense(ids, default_value=-1), self._n_classes), axis=1
            )
        labels = tf.convert_to_tensor(labels)
        self._check_label_shape(labels, self._n_classes)
        message = "labels must be an integer indicator Tensor with values in [0, 1]"
        is_indicator = tf.reduce_all(tf.logical_or(tf.equal(labels, 0), tf.equal(labels, 1)))
        with tf.control_dependencies([tf.debugging.Assert(is_indicator, [message, labels])]):
            return tf.cast(labels, tf.float32)

    def _unweighted_loss(self, labels: tf.Tensor, logits: tf.Tensor) -> tf.Tensor:
        loss = tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits)
        return tf.reduce_mean(loss, axis=-1, keepdims=True)

    def predictions(self, logits: tf.Tensor, keys: list | None = None) -> dict:
        logits = self._check_logits(logits)
        with tf.name_scope("predictions"):
            _, all_names = class_labels.all_classes(logits, self._n_classes, self._vocabulary)
            predictions = {
                base.LOGITS: logits,
                base.PROBABILITIES: tf.sigmoid(logits, name=base.PROBABILITIES),
                base.ALL_CLASS_IDS: class_labels.all_classes(logits, self._n_classes, None)[0],
                base.ALL_CLASSES: all_names,
            }
        return {k: v for k, v in predictions.items() if keys is None or k in keys}

    def _eval_metrics(self, labels, logits, predictions, weights, unweighted) -> dict:
        probabilities = predictions[base.PROBABILITIES]
        class_weights = tf.broadcast_to(weights, tf.shape(probabilities))
        metrics: dict[str, Any] = {
            base.LOSS_MEAN: base.weighted_mean(base.LOSS_MEAN, unweighted, weights),
            base.AUC: base.updated(
                keras.metrics.AUC(name=base.AUC, num_thresholds=200),
                labels,
                probabilities,
                class_weights,
            ),  # fmt: skip
            base.AUC_PR: base.updated(
                keras.metrics.AUC(name=base.AUC_PR, curve="PR", num_thresholds=200),
                labels,
                probabilities,
                class_weights,
            ),  # fmt: skip
        }
        for class_id in self._metric_classes:
            truth, scores = labels[:, class_id], probabilities[:, class_id]
            weights_c = class_weights[:, class_id]
            metrics[f"{base.AUC}/class{class_id}"] = base.updated(
                keras.metrics.AUC(num_thresholds=200), truth, scores, weights_c
            )
            metrics[f"{base.AUC_PR}/class{class_id}"] = base.updated(
                keras.metrics.AUC(curve="PR", num_thresholds=200), truth, scores, weights_c
            )
            metrics[f"probability_mean/class{class_id}"] = base.weighted_mean(
                f"probability_mean/class{class_id}", scores, weights_c
            )
        metrics.update(
            base.threshold_metrics(self._thresholds, labels, probabilities, class_weights)
        )
        return metrics

    def _export_outputs(self, predictions: dict) -> dict:
        return base.classification_export_outputs(predictions)
