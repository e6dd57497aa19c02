"""`tf.contrib.metrics`: streaming metrics as `(value, update_op)` pairs for eval_metric_ops.

The `streaming_*` names that have a `tf.compat.v1.metrics` twin call it (contrib's
argument order: predictions first, then labels). `streaming_covariance` and
`streaming_pearson_correlation` (BERT's STS-B, XLNet) are contrib's streaming co-moment
updates, with local variables `<scope>/count`, `mean_prediction`, `mean_label`, `comoment`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import tensorflow as tf

from keras_estimator.dropin.contrib.removed import removed_attribute_getattr

_V1 = tf.compat.v1
_METRICS = _V1.metrics


def _predictions_first(v1_metric: Callable) -> Callable:
    @functools.wraps(v1_metric)
    def streaming(predictions: Any, labels: Any, *args: Any, **kwargs: Any) -> Any:
        return v1_metric(labels, predictions, *args, **kwargs)

    streaming.__doc__ = (
        f"`tf.compat.v1.metrics.{v1_metric.__name__}(labels, predictions, ...)` called "
        "with contrib's order `(predictions, labels, ...)`."
    )
    return streaming


streaming_accuracy = _predictions_first(_METRICS.accuracy)
streaming_precision = _predictions_first(_METRICS.precision)
streaming_recall = _predictions_first(_METRICS.recall)
streaming_auc = _predictions_first(_METRICS.auc)
streaming_mean_absolute_error = _predictions_first(_METRICS.mean_absolute_error)
streaming_mean_squared_error = _predictions_first(_METRICS.mean_squared_error)
streaming_root_mean_squared_error = _predictions_first(_METRICS.root_mean_squared_error)
streaming_mean_relative_error = _predictions_first(_METRICS.mean_relative_error)
streaming_mean_cosine_distance = _predictions_first(_METRICS.mean_cosine_distance)
streaming_mean_iou = _predictions_first(_METRICS.mean_iou)
streaming_true_positives = _predictions_first(_METRICS.true_positives)
streaming_true_negatives = _predictions_first(_METRICS.true_negatives)
streaming_false_positives = _predictions_first(_METRICS.false_positives)
streaming_false_negatives = _predictions_first(_METRICS.false_negatives)
streaming_precision_at_thresholds = _predictions_first(_METRICS.precision_at_thresholds)
streaming_recall_at_thresholds = _predictions_first(_METRICS.recall_at_thresholds)
streaming_sparse_precision_at_k = _predictions_first(_METRICS.precision_at_k)
streaming_sparse_recall_at_k = _predictions_first(_METRICS.recall_at_k)
streaming_mean = _METRICS.mean
streaming_mean_tensor = _METRICS.mean_tensor


def _metric_variable(name: str) -> tf.Variable:
    keys = _V1.GraphKeys
    return _V1.Variable(lambda: tf.zeros([], tf.float32), trainable=False, name=name,
                        collections=[keys.LOCAL_VARIABLES, keys.METRIC_VARIABLES])  # fmt: skip


def _squeezed(predictions: Any, labels: Any, weights: Any) -> tuple[Any, Any, Any]:
    predictions = tf.cast(tf.convert_to_tensor(predictions), tf.float32)
    labels = tf.cast(tf.convert_to_tensor(labels), tf.float32)
    p_rank, l_rank = predictions.shape.rank, labels.shape.rank
    if p_rank is not None and l_rank is not None:
        if p_rank == l_rank + 1 and predictions.shape[-1] == 1:
            predictions = tf.squeeze(predictions, -1)
        elif l_rank == p_rank + 1 and labels.shape[-1] == 1:
            labels = tf.squeeze(labels, -1)
    predictions.shape.assert_is_compatible_with(labels.shape)
    if weights is not None:
        weights = tf.cast(tf.convert_to_tensor(weights), tf.float32)
        if weights.shape.rank == (labels.shape.rank or 0) + 1 and weights.shape[-1] == 1:
            weights = tf.squeeze(weights, -1)
        weights = tf.broadcast_to(weights, tf.shape(labels))
    return predictions, labels, weights


def _published(
    metrics_collections: Any, updates_collections: Any, value: tf.Tensor, update_op: tf.Tensor
) -> tuple[tf.Tensor, tf.Tensor]:
    """`(value, update_op)`, added to contrib's `metrics_collections` / `updates_collections`."""
    for collection in metrics_collections or []:
        _V1.add_to_collection(collection, value)
    for collection in updates_collections or []:
        _V1.add_to_collection(collection, update_op)
    return value, update_op


def _streamed_mean(
    mean: tf.Variable,
    weighted: tf.Tensor,
    batch_count: tf.Tensor,
    update_count: tf.Tensor,
    what: str,
) -> tuple[tf.Tensor, tf.Tensor]:
    """Moves `mean` to the running mean after this batch; `(batch mean, previous mean)`."""
    batch_mean = _safe_div(tf.reduce_sum(weighted), batch_count, f"batch_mean_{what}")
    delta_mean = _safe_div((batch_mean - mean) * batch_count, update_count, f"delta_mean_{what}")
    update_mean = mean.assign_add(delta_mean)
    return batch_mean, update_mean - delta_mean


def _safe_div(numerator: tf.Tensor, denominator: tf.Tensor, name: str) -> tf.Tensor:
    return tf.where(denominator > 0, tf.math.divide_no_nan(numerator, denominator),
                    tf.zeros_like(numerator), name=name)  # fmt: skip


def streaming_covariance(
    predictions: Any,
    labels: Any,
    weights: Any = None,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: str | None = None,
) -> tuple[tf.Tensor, tf.Tensor]:
    """The unbiased (n - 1) weighted covariance of `predictions` and `labels`, streamed.

    NaN until more than one value (more than a total weight of 1) was seen.

    Example:
        >>> cov, update_op = streaming_covariance(predictions, labels)
    """
    with _V1.variable_scope(name, "covariance", (predictions, labels, weights)):
        predictions, labels, weights = _squeezed(predictions, labels, weights)
        count = _metric_variable("count")
        mean_prediction = _metric_variable("mean_prediction")
        mean_label = _metric_variable("mean_label")
        comoment = _metric_variable("comoment")
        if weights is None:
            batch_count = tf.cast(tf.size(labels), tf.float32)
            weighted_predictions, weighted_labels = predictions, labels
        else:
            batch_count = tf.reduce_sum(weights)
            weighted_predictions, weighted_labels = predictions * weights, labels * weights
        update_count = count.assign_add(batch_count)
        prev_count = update_count - batch_count
        batch_mean_prediction, prev_mean_prediction = _streamed_mean(
            mean_prediction, weighted_predictions, batch_count, update_count, "prediction"
        )
        batch_mean_label, prev_mean_label = _streamed_mean(
            mean_label, weighted_labels, batch_count, update_count, "label"
        )
        coresiduals = (predictions - batch_mean_prediction) * (labels - batch_mean_label)
        if weights is not None:
            coresiduals = coresiduals * weights
        batch_comoment = tf.reduce_sum(coresiduals)
        delta_comoment = batch_comoment + (prev_mean_prediction - batch_mean_prediction) * (
            prev_mean_label - batch_mean_label
        ) * (prev_count * batch_count / update_count)
        update_comoment = comoment.assign_add(delta_comoment)

        def covariance_of(moment: tf.Tensor, n: tf.Tensor, op_name: str) -> tf.Tensor:
            nan = tf.constant(float("nan"), tf.float32)
            return tf.where(n <= 1.0, nan, tf.math.truediv(moment, n - 1.0), name=op_name)

        covariance = covariance_of(tf.convert_to_tensor(comoment), tf.convert_to_tensor(count),
                                   "covariance")  # fmt: skip
        with tf.control_dependencies([update_comoment]):
            update_op = covariance_of(tf.convert_to_tensor(comoment),
                                      tf.convert_to_tensor(count), "update_op")  # fmt: skip
        return _published(metrics_collections, updates_collections, covariance, update_op)


def streaming_pearson_correlation(
    predictions: Any,
    labels: Any,
    weights: Any = None,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: str | None = None,
) -> tuple[tf.Tensor, tf.Tensor]:
    """Pearson's r of `predictions` and `labels`, streamed: cov / (sd_p * sd_l).

    Example:
        >>> eval_metric_ops = {"pearson": streaming_pearson_correlation(predictions, labels)}
    """
    with _V1.variable_scope(name, "pearson_r", (predictions, labels, weights)):
        predictions, labels, weights = _squeezed(predictions, labels, weights)
        cov, update_cov = streaming_covariance(predictions, labels, weights, name="covariance")
        var_p, update_var_p = streaming_covariance(predictions, predictions, weights,
                                                   name="variance_predictions")  # fmt: skip
        var_l, update_var_l = streaming_covariance(labels, labels, weights,
                                                   name="variance_labels")  # fmt: skip
        pearson_r = tf.math.truediv(cov, tf.sqrt(var_p) * tf.sqrt(var_l), name="pearson_r")
        update_op = tf.math.truediv(update_cov, tf.sqrt(update_var_p) * tf.sqrt(update_var_l),
                                    name="update_op")  # fmt: skip
        return _published(metrics_collections, updates_collections, pearson_r, update_op)


def aggregate_metrics(*value_update_tuples: tuple) -> tuple[list, list]:
    """`((v1, u1), (v2, u2))` -> `([v1, v2], [u1, u2])`.

    Example:
        >>> values, updates = aggregate_metrics(streaming_accuracy(p, l), streaming_auc(p, l))
    """
    if not value_update_tuples:
        raise ValueError(
            "aggregate_metrics needs at least one (value, update_op) pair. Fix: pass some. "
            "Received: value_update_tuples=()"
        )
    values, updates = zip(*value_update_tuples)
    return list(values), list(updates)


def aggregate_metric_map(names_to_tuples: dict) -> tuple[dict, dict]:
    """`{name: (value, update)}` -> `({name: value}, {name: update})`.

    Example:
        >>> values, updates = aggregate_metric_map({"acc": streaming_accuracy(p, l)})
    """
    return ({name: pair[0] for name, pair in names_to_tuples.items()},
            {name: pair[1] for name, pair in names_to_tuples.items()})  # fmt: skip


__getattr__ = removed_attribute_getattr("metrics", "tf.compat.v1.metrics or keras.metrics")


__all__ = [
    "aggregate_metric_map",
    "aggregate_metrics",
    "streaming_accuracy",
    "streaming_auc",
    "streaming_covariance",
    "streaming_false_negatives",
    "streaming_false_positives",
    "streaming_mean",
    "streaming_mean_absolute_error",
    "streaming_mean_cosine_distance",
    "streaming_mean_iou",
    "streaming_mean_relative_error",
    "streaming_mean_squared_error",
    "streaming_mean_tensor",
    "streaming_pearson_correlation",
    "streaming_precision",
    "streaming_precision_at_thresholds",
    "streaming_recall",
    "streaming_recall_at_thresholds",
    "streaming_root_mean_squared_error",
    "streaming_sparse_precision_at_k",
    "streaming_sparse_recall_at_k",
    "streaming_true_negatives",
    "streaming_true_positives",
]
