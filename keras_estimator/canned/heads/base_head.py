"""What every head shares: weights, loss reduction, the EstimatorSpec for each mode.

A head turns logits into predictions, a loss and evaluation metrics, as tf.estimator 2.x's
heads did. Reductions follow tf.estimator 2.15: SUM_OVER_BATCH_SIZE (the default) is
`sum(weight * loss) / number of losses`, SUM is `sum(weight * loss)`; evaluation's
`average_loss` is `sum(weight * loss) / sum(weight)` over all examples.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import keras
import tensorflow as tf

from keras_estimator.canned import optimizers as optimizers_lib
from keras_estimator.export.export_outputs import ClassificationOutput, PredictOutput
from keras_estimator.seam.internals import keras_variable_backing
from keras_estimator.spec.estimator_spec import EstimatorSpec
from keras_estimator.spec.mode_keys import ModeKeys
from keras_estimator.utils.fn_args import fn_args

SUM_OVER_BATCH_SIZE = "sum_over_batch_size"
SUM = "sum"
_REDUCTIONS = (SUM_OVER_BATCH_SIZE, SUM, "auto")

# Metric and prediction keys (tf.estimator's names).
LOSS_MEAN = "average_loss"
LOSS_REGULARIZATION = "regularization_loss"
ACCURACY = "accuracy"
ACCURACY_BASELINE = "accuracy_baseline"
AUC = "auc"
AUC_PR = "auc_precision_recall"
PRECISION = "precision"
RECALL = "recall"
LABEL_MEAN = "label/mean"
PREDICTION_MEAN = "prediction/mean"
LOGITS = "logits"
LOGISTIC = "logistic"
PROBABILITIES = "probabilities"
CLASS_IDS = "class_ids"
CLASSES = "classes"
ALL_CLASS_IDS = "all_class_ids"
ALL_CLASSES = "all_classes"
PREDICTIONS = "predictions"

# Export signature names.
SERVING_DEFAULT = "serving_default"
CLASSIFY = "classification"
REGRESS = "regression"
PREDICT = "predict"


def check_loss_reduction(loss_reduction: Any) -> str:
    value = getattr(loss_reduction, "value", loss_reduction)
    if value not in _REDUCTIONS:
        raise ValueError(
            f"Invalid loss_reduction: {value}. See `tf.losses.Reduction` for valid options."
        )
    return SUM_OVER_BATCH_SIZE if value == "auto" else value


def feature(features: dict, key: str) -> tf.Tensor:
    if not isinstance(features, dict):
        raise ValueError(
            f"features should be a dictionary of `Tensor`s. Given type: {type(features)}"
        )
    if key not in features:
        raise ValueError(f"Feature {key} is not in features dictionary.")
    return features[key]


def as_column(tensor: Any, dtype: Any = None) -> tf.Tensor:
    """A [batch, 1] tensor from [batch] or [batch, 1]."""
    if isinstance(tensor, tf.SparseTensor):
        raise ValueError(
            "SparseTensor labels are not supported. labels must be a Tensor of shape "
            "[D0, D1, ..., DN, 1] or [D0, D1, ..., DN]. Suggested Fix (1): Check the label "
            "feature in your data. Each example must contain the label feature. Suggested "
            "Fix (2): In your input_fn, use tf.sparse.to_dense() to turn labels into a Tensor."
        )
    tensor = tf.convert_to_tensor(tensor)
    if dtype is not None and tensor.dtype != dtype:
        tensor = tf.cast(tensor, dtype)
    if tensor.shape.rank == 1:
        tensor = tf.expand_dims(tensor, -1)
    return tensor


class AccuracyBaseline(keras.metrics.Mean):
    """max(mean label, 1 - mean label): the accuracy of always guessing the majority."""

    def result(self):
        mean = super().result()
        return tf.maximum(mean, 1.0 - mean)


class Head:
    """The base of the heads: subclasses define the loss, predictions and metrics.

    Args:
        weight_column: A feature key or numeric column whose values weight each example.
        loss_reduction: `"sum_over_batch_size"` (default) or `"sum"`.
        loss_fn: Optional `loss_fn(labels, logits)` giving per-example losses.
        name: Suffixes metric keys as `key/name` (and names the head in a MultiHead).
    """

    _weights_per_dimension = False  # regression heads also take [batch, label_dimension]

    @property
    def logits_dimension(self) -> int:
        """The size of the logits' last dimension (1; heads of more outputs override it)."""
        return 1

    def __init__(
        self,
        weight_column: Any = None,
        loss_reduction: Any = SUM_OVER_BATCH_SIZE,
        loss_fn: Callable | None = None,
        name: str | None = None,
    ) -> None:
        self._weight_column = weight_column
        self._loss_reduction = check_loss_reduction(loss_reduction)
        self._loss_fn = loss_fn
        self._name = name

    name = property(lambda self: self._name)
    loss_reduction = property(lambda self: self._loss_reduction)

    # -- what subclasses provide ----------------------------------------------------
    def _processed_labels(self, logits: tf.Tensor, labels: Any) -> tf.Tensor:
        raise NotImplementedError

    def _unweighted_loss(self, labels: tf.Tensor, logits: tf.Tensor) -> tf.Tensor:
        """Per-example losses, [batch, k]."""
        raise NotImplementedError

    def predictions(self, logits: tf.Tensor, keys: list | None = None) -> dict:
        raise NotImplementedError

    def _eval_metrics(self, labels, logits, predictions, weights, unweighted) -> dict:
        raise NotImplementedError

    def _export_outputs(self, predictions: dict) -> dict:
        raise NotImplementedError

    # -- shared -----------------------------------------------------------------------
    def _key(self, key: str) -> str:
        return f"{key}/{self._name}" if self._name else key

    def _weights(self, features: dict, logits: tf.Tensor) -> tf.Tensor:
        if self._weight_column is None:
            return tf.ones_like(logits[:, :1])
        key = getattr(self._weight_column, "key", self._weight_column)
        weights = as_column(feature(features, key), tf.float32)
        normalizer = getattr(self._weight_column, "normalizer_fn", None)
        if normalizer is not None:  # a numeric_column's normalizer applies, as in tf.estimator
            weights = tf.cast(normalizer(weights), tf.float32)
        allowed = {1, logits.shape[-1]} if self._weights_per_dimension else {1}
        if weights.shape.rank != 2 or weights.shape[-1] not in allowed:
            raise ValueError(
                "weights shape must be [D0, D1, ... DN] or [D0, D1, ... DN, 1]"
                + (", or [D0, D1, ... DN, logits_dimension]" if self._weights_per_dimension
                   else "")
                + f". weights shape: {weights.shape}; logits shape: {logits.shape}. Expected "
                f"one weight per example in feature {key!r}."
            )  # fmt: skip
        return weights

    def _check_logits(self, logits: Any) -> tf.Tensor:
        logits = tf.convert_to_tensor(logits)
        if logits.shape.rank == 1 and self.logits_dimension == 1:
            logits = tf.expand_dims(logits, -1)
        last = logits.shape[-1]
        if last is not None and last != self.logits_dimension:
            raise ValueError(
                f"logits shape must be [D0, D1, ... DN, logits_dimension], got {logits.shape}. "
                f"Expected logits_dimension={self.logits_dimension}."
            )
        return logits

    def _check_label_shape(self, labels: tf.Tensor, expected: int) -> None:
        got = labels.shape[-1]
        if got is not None and got != expected:
            raise ValueError(
                f"Mismatched label shape. Expected labels dimension={expected}.  Received "
                f"{got}. Suggested Fix: If your classifier expects one-hot encoding label, "
                "check your n_classes argument to the estimator and/or the shape of your "
                "label. Otherwise, check the shape of your label."
            )

    def _per_example(self, labels: tf.Tensor, logits: tf.Tensor, features: Any) -> tf.Tensor:
        if self._loss_fn is not None:
            kwargs = {"labels": labels, "logits": logits}
            if "features" in fn_args(self._loss_fn):
                kwargs["features"] = features
            loss = tf.convert_to_tensor(self._loss_fn(**kwargs))
            return tf.reshape(tf.cast(loss, tf.float32), [tf.shape(logits)[0], -1])
        return self._unweighted_loss(labels, logits)

    def _reduce(self, unweighted: tf.Tensor, weights: tf.Tensor) -> tf.Tensor:
        weighted = unweighted * weights
        total = tf.reduce_sum(weighted)
        if self._loss_reduction == SUM:
            return total
        return total / tf.cast(tf.size(weighted), tf.float32)

    def loss(
        self,
        labels: Any,
        logits: Any,
        features: dict | None = None,
        mode: str | None = None,
        regularization_losses: list | None = None,
    ) -> tf.Tensor:
        """The training loss: reduced weighted losses plus any regularization losses."""
        logits = self._check_logits(logits)
        processed = self._processed_labels(logits, labels)
        unweighted = self._per_example(processed, logits, features)
        loss = self._reduce(unweighted, self._weights(features or {}, logits))
        if regularization_losses:
            loss = loss + tf.add_n(list(regularization_losses))
        return loss

    def create_estimator_spec(
        self,
        features: dict,
        mode: str,
        logits: Any,
        labels: Any = None,
        optimizer: Any = None,
        trainable_variables: list | None = None,
        train_op_fn: Callable | None = None,
        update_ops: list | None = None,
        regularization_losses: list | None = None,
    ) -> EstimatorSpec:
        """The EstimatorSpec for `mode`, as tf.estimator's heads built it.

        Example:
            >>> head = MultiClassHead(n_classes=3)
            >>> return head.create_estimator_spec(features, mode, logits, labels,
            ...                                   optimizer=keras.optimizers.Adagrad(0.05))
        """
        with tf.name_scope(self._name or "head"):
            logits = self._check_logits(logits)
            predictions = self.predictions(logits)
            if mode == ModeKeys.PREDICT:
                return EstimatorSpec(
                    mode, predictions=predictions, export_outputs=self._export_outputs(predictions)
                )
            if labels is None:
                raise ValueError(f"You must provide a labels Tensor. Given: None. ({mode})")
            processed = self._processed_labels(logits, labels)
            unweighted = self._per_example(processed, logits, features)
            weights = self._weights(features, logits)
            loss = self._reduce(unweighted, weights)
            regularization = (
                tf.add_n(list(regularization_losses)) if regularization_losses else None
            )
            if regularization is not None:
                loss = loss + regularization
            if mode == ModeKeys.EVAL:
                metrics = self._eval_metrics(processed, logits, predictions, weights, unweighted)
                if regularization is not None:
                    metric = keras.metrics.Mean(name=LOSS_REGULARIZATION)
                    metric.update_state(regularization)
                    metrics[LOSS_REGULARIZATION] = metric
                metrics = {self._key(k): v for k, v in metrics.items()}
                metric_variables_in_no_collection(metrics)
                return EstimatorSpec(mode, loss=loss, predictions=predictions,
                                     eval_metric_ops=metrics)  # fmt: skip
        train_op = self._train_op(loss, optimizer, trainable_variables, train_op_fn, update_ops)
        return EstimatorSpec(mode, loss=loss, predictions=predictions, train_op=train_op)

    def _train_op(self, loss, optimizer, trainable_variables, train_op_fn, update_ops) -> Any:
        if (optimizer is None) == (train_op_fn is None):
            raise ValueError(
                "The head needs exactly one of optimizer and train_op_fn to train; given "
                f"optimizer={optimizer!r}, train_op_fn={train_op_fn!r}."
            )
        if optimizer is not None:
            variables = trainable_variables
            if variables is None:
                variables = tf.compat.v1.trainable_variables()
            resolved = optimizers_lib.resolve_optimizer(optimizer, None)
            train_op = optimizers_lib.minimize(
                resolved, loss, list(variables), self._loss_reduction == SUM_OVER_BATCH_SIZE
            )
        else:
            train_op = train_op_fn(loss)
        if update_ops:
            train_op = tf.group(train_op, *update_ops)
        return train_op


def metric_variables_in_no_collection(metrics: dict) -> None:
    """In a TF1 graph of the caller's own (a library's, AdaNet's bookkeeping), the Keras
    metrics' variables leave GLOBAL_VARIABLES: tf.keras 2 made them in no collection, so a
    `tf.compat.v1.train.Saver()` there neither saves nor restores them. (In the engine's
    traced step they are made eagerly, outside any graph collection.)"""
    graph = tf.compat.v1.get_default_graph()
    if tf.executing_eagerly() or hasattr(graph, "captures"):
        return
    made = {
        id(keras_variable_backing(variable))
        for metric in metrics.values()
        if isinstance(metric, keras.metrics.Metric)
        for variable in metric.variables
    }
    kept = graph.get_collection_ref(tf.compat.v1.GraphKeys.GLOBAL_VARIABLES)
    kept[:] = [variable for variable in kept if id(variable) not in made]


def weighted_mean(name: str, values: tf.Tensor, weights: tf.Tensor) -> keras.metrics.Mean:
    metric = keras.metrics.Mean(name=name)
    weights = tf.broadcast_to(weights, tf.shape(values))
    metric.update_state(values, sample_weight=weights)
    return metric


def updated(metric: keras.metrics.Metric, y_true, y_pred, weights) -> keras.metrics.Metric:
    """`metric` after one update with this batch (what eval_metric_ops takes)."""
    metric.update_state(y_true, y_pred, sample_weight=weights)
    return metric


def threshold_metrics(thresholds: tuple, labels, scores, weights) -> dict:
    """accuracy / precision / recall at each extra threshold (`.../positive_threshold_T`)."""
    metrics: dict[str, keras.metrics.Metric] = {}
    for threshold in thresholds:
        suffix = f"positive_threshold_{threshold:g}"
        for key, metric in (
            (ACCURACY, keras.metrics.BinaryAccuracy(threshold=threshold)),
            (PRECISION, keras.metrics.Precision(thresholds=threshold)),
            (RECALL, keras.metrics.Recall(thresholds=threshold)),
        ):
            metrics[f"{key}/{suffix}"] = updated(metric, labels, scores, weights)
    return metrics


def classification_export_outputs(predictions: dict, **extra: Any) -> dict:
    """serving_default / classification (scores, class names), `extra`, and predict."""
    classification = ClassificationOutput(
        scores=predictions[PROBABILITIES], classes=predictions[ALL_CLASSES]
    )
    return {SERVING_DEFAULT: classification, CLASSIFY: classification, **extra,
            PREDICT: PredictOutput(predictions)}  # fmt: skip
