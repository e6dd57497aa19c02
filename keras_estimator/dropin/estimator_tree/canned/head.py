"""2.15's `canned/head.py`: the v1 head interface `_Head` and its three heads.

Libraries subclass `_Head` (DeepCTR's estimators write their own `create_estimator_spec`)
and call the factory functions (`_binary_logistic_head_with_sigmoid_cross_entropy_loss`,
...). The heads here are the v1 canned estimators' own (`keras_estimator.canned.v1.heads`:
summed loss, `tf.compat.v1.train` optimizers) behind 2.15's v1 signatures:
`create_loss(features, mode, logits, labels)` returns a `LossSpec`, and
`create_estimator_spec(features, mode, logits, labels, optimizer, train_op_fn,
regularization_losses)`.
"""

from __future__ import annotations

import abc
import collections
from typing import Any

import tensorflow as tf

from keras_estimator.canned.heads.class_labels import all_classes as _all_class_names
from keras_estimator.canned.v1.heads import (
    SUM,
    V1BinaryClassHead,
    V1MultiClassHead,
    V1RegressionHead,
    check_loss_reduction,
)

_V1 = tf.compat.v1

LossSpec = collections.namedtuple(
    "LossSpec", ["training_loss", "unreduced_loss", "weights", "processed_labels"]
)


def _summary_key(head_name: str | None, val: str) -> str:
    """`val/head_name`, or `val` for an unnamed head: 2.15's metric and summary keys."""
    return f"{val}/{head_name}" if head_name else val


class _Head(abc.ABC):
    """2.15's v1 head interface: what a v1 canned estimator asks of its head.

    A subclass gives `name`, `logits_dimension`, `create_loss` and either
    `create_estimator_spec` or `_create_tpu_estimator_spec` (whose `.as_estimator_spec()`
    the default `create_estimator_spec` returns).

    Example:
        >>> class MyHead(_Head):
        ...     name = None
        ...     logits_dimension = 1
        ...     def create_loss(self, features, mode, logits, labels): ...
        ...     def create_estimator_spec(self, features, mode, logits, labels=None,
        ...                               optimizer=None, train_op_fn=None,
        ...                               regularization_losses=None): ...
    """

    @property
    @abc.abstractmethod
    def name(self) -> str | None:
        """The head's name: the suffix of its metric keys, or None."""

    @property
    @abc.abstractmethod
    def logits_dimension(self) -> int:
        """The size of the logits' last dimension."""

    @abc.abstractmethod
    def create_loss(self, features: Any, mode: str, logits: Any, labels: Any) -> LossSpec:
        """The loss of `logits` against `labels`, as a `LossSpec`."""

    def _create_tpu_estimator_spec(
        self,
        features: Any,
        mode: str,
        logits: Any,
        labels: Any = None,
        optimizer: Any = None,
        train_op_fn: Any = None,
        regularization_losses: Any = None,
    ) -> Any:
        raise NotImplementedError(
            f"{type(self).__name__} implements neither create_estimator_spec nor "
            "_create_tpu_estimator_spec. A _Head subclass gives one of them. Fix: define "
            "create_estimator_spec(features, mode, logits, labels, optimizer, train_op_fn, "
            "regularization_losses) returning an EstimatorSpec."
        )

    def create_estimator_spec(
        self,
        features: Any,
        mode: str,
        logits: Any,
        labels: Any = None,
        optimizer: Any = None,
        train_op_fn: Any = None,
        regularization_losses: Any = None,
    ) -> Any:
        """The EstimatorSpec for `mode` (by default `_create_tpu_estimator_spec`'s)."""
        spec = self._create_tpu_estimator_spec(
            features, mode, logits, labels, optimizer, train_op_fn, regularization_losses
        )
        return spec.as_estimator_spec() if hasattr(spec, "as_estimator_spec") else spec


class _V1HeadAdapter(_Head):
    """A v1 head of ours behind 2.15's `_Head` signatures."""

    def __init__(self, head: Any, name: str | None) -> None:
        self._head = head
        self._name = name

    @property
    def name(self) -> str | None:
        return self._name

    @property
    def logits_dimension(self) -> int:
        return self._head.logits_dimension

    def create_loss(self, features: Any, mode: str, logits: Any, labels: Any) -> LossSpec:
        head = self._head
        logits = head._check_logits(logits)
        processed = head._processed_labels(logits, labels)
        unreduced = head._per_example(processed, logits, features)
        weights = head._weights(features or {}, logits)
        training_loss = head._reduce(unreduced, weights)
        return LossSpec(training_loss, unreduced, weights, processed)

    def create_estimator_spec(
        self,
        features: Any,
        mode: str,
        logits: Any,
        labels: Any = None,
        optimizer: Any = None,
        train_op_fn: Any = None,
        regularization_losses: Any = None,
    ) -> Any:
        return self._head.create_estimator_spec(
            features,
            mode,
            logits,
            labels,
            optimizer=optimizer,
            train_op_fn=train_op_fn,
            regularization_losses=regularization_losses,
        )

    def predictions(self, logits: Any, keys: list | None = None) -> dict:
        return self._head.predictions(logits, keys)


class _BinaryLogisticHeadWithSigmoidCrossEntropyLoss(_V1HeadAdapter):
    """2.15's v1 binary head: sigmoid cross-entropy, summed over the batch by default."""

    def __init__(
        self,
        weight_column: Any = None,
        thresholds: Any = None,
        label_vocabulary: Any = None,
        loss_reduction: Any = SUM,
        loss_fn: Any = None,
        name: str | None = None,
    ) -> None:
        _no_loss_fn(loss_fn)
        head = V1BinaryClassHead(weight_column, label_vocabulary, loss_reduction, name)
        if thresholds:
            head._thresholds = tuple(thresholds)
        super().__init__(head, name)


class _MultiClassHeadWithSoftmaxCrossEntropyLoss(_V1HeadAdapter):
    """2.15's v1 multi-class head: softmax cross-entropy, summed over the batch by default."""

    def __init__(
        self,
        n_classes: int,
        weight_column: Any = None,
        label_vocabulary: Any = None,
        loss_reduction: Any = SUM,
        loss_fn: Any = None,
        name: str | None = None,
    ) -> None:
        _validate_n_classes(n_classes)
        _no_loss_fn(loss_fn)
        head = V1MultiClassHead(n_classes, weight_column, label_vocabulary, loss_reduction, name)
        super().__init__(head, name)


class _RegressionHeadWithMeanSquaredErrorLoss(_V1HeadAdapter):
    """2.15's v1 regression head: squared error, summed over the batch by default."""

    def __init__(
        self,
        label_dimension: int = 1,
        weight_column: Any = None,
        loss_reduction: Any = SUM,
        loss_fn: Any = None,
        inverse_link_fn: Any = None,
        name: str | None = None,
    ) -> None:
        _no_loss_fn(loss_fn)
        if inverse_link_fn is not None:
            raise ValueError(
                "inverse_link_fn is not supported by keras_estimator's v1 regression head. "
                "Expected inverse_link_fn=None. Fix: use the v2 head, "
                "keras_estimator.RegressionHead(inverse_link_fn=...), with a v2 estimator."
            )
        head = V1RegressionHead(label_dimension, weight_column, loss_reduction, name)
        super().__init__(head, name)


def _no_loss_fn(loss_fn: Any) -> None:
    if loss_fn is not None:
        raise ValueError(
            "A custom loss_fn is not supported by keras_estimator's v1 heads. Expected "
            "loss_fn=None. Fix: use the v2 heads (keras_estimator.BinaryClassHead(loss_fn="
            "...), MultiClassHead, RegressionHead), which take one."
        )


def _validate_n_classes(n_classes: Any) -> None:
    if not isinstance(n_classes, int) or n_classes <= 2:
        raise ValueError(
            f"n_classes must be > 2: {n_classes}. Expected an int > 2 (2 classes take the "
            "binary head). Fix: use _binary_logistic_head_with_sigmoid_cross_entropy_loss."
        )


def _binary_logistic_head_with_sigmoid_cross_entropy_loss(
    weight_column: Any = None,
    thresholds: Any = None,
    label_vocabulary: Any = None,
    loss_reduction: Any = SUM,
    loss_fn: Any = None,
    name: str | None = None,
) -> _Head:
    check_loss_reduction(loss_reduction)
    return _BinaryLogisticHeadWithSigmoidCrossEntropyLoss(
        weight_column, thresholds, label_vocabulary, loss_reduction, loss_fn, name
    )


def _multi_class_head_with_softmax_cross_entropy_loss(
    n_classes: int,
    weight_column: Any = None,
    label_vocabulary: Any = None,
    loss_reduction: Any = SUM,
    loss_fn: Any = None,
    name: str | None = None,
) -> _Head:
    check_loss_reduction(loss_reduction)
    return _MultiClassHeadWithSoftmaxCrossEntropyLoss(
        n_classes, weight_column, label_vocabulary, loss_reduction, loss_fn, name
    )


def _binary_logistic_or_multi_class_head(
    n_classes: int, weight_column: Any, label_vocabulary: Any, loss_reduction: Any
) -> _Head:
    if n_classes == 2:
        return _binary_logistic_head_with_sigmoid_cross_entropy_loss(
            weight_column=weight_column,
            label_vocabulary=label_vocabulary,
            loss_reduction=loss_reduction,
        )
    return _multi_class_head_with_softmax_cross_entropy_loss(
        n_classes, weight_column, label_vocabulary, loss_reduction
    )


def _regression_head(
    weight_column: Any = None,
    label_dimension: int = 1,
    loss_reduction: Any = SUM,
    loss_fn: Any = None,
    inverse_link_fn: Any = None,
    name: str | None = None,
) -> _Head:
    check_loss_reduction(loss_reduction)
    return _RegressionHeadWithMeanSquaredErrorLoss(
        label_dimension, weight_column, loss_reduction, loss_fn, inverse_link_fn, name
    )


# -- 2.15's metric helpers, which custom heads (DeepCTR's) call ------------------------------
def _predictions_mean(predictions: Any, weights: Any, name: str | None = None) -> Any:
    return _V1.metrics.mean(predictions, weights=weights, name=name)


def _indicator_labels_mean(labels: Any, weights: Any = None, name: str | None = None) -> Any:
    return _V1.metrics.mean(labels, weights=weights, name=name)


def _auc(
    labels: Any, predictions: Any, weights: Any = None, curve: str = "ROC", name: str | None = None
) -> Any:
    predictions = tf.cast(predictions, tf.float32)
    return _V1.metrics.auc(labels, predictions, weights=weights, curve=curve, name=name)


def _accuracy_baseline(labels_mean: Any) -> Any:
    value, update = labels_mean
    return tf.maximum(value, 1.0 - value), tf.maximum(update, 1.0 - update)


def _accuracy_at_threshold(
    labels: Any, predictions: Any, weights: Any, threshold: float, name: str | None = None
) -> Any:
    predicted = tf.cast(tf.greater_equal(predictions, threshold), tf.float32)
    return _V1.metrics.accuracy(labels, predicted, weights=weights, name=name)


def _at_threshold(metric: Any, labels: Any, predictions: Any, weights: Any, threshold: float,
                  name: str | None) -> Any:  # fmt: skip
    value, update = metric(labels, predictions, [threshold], weights=weights, name=name)
    return tf.squeeze(value), tf.squeeze(update)


def _precision_at_threshold(labels: Any, predictions: Any, weights: Any, threshold: float,
                            name: str | None = None) -> Any:  # fmt: skip
    return _at_threshold(_V1.metrics.precision_at_thresholds, labels, predictions, weights,
                         threshold, name)  # fmt: skip


def _recall_at_threshold(labels: Any, predictions: Any, weights: Any, threshold: float,
                         name: str | None = None) -> Any:  # fmt: skip
    return _at_threshold(_V1.metrics.recall_at_thresholds, labels, predictions, weights,
                         threshold, name)  # fmt: skip


def _all_classes(logits: Any, n_classes: int, label_vocabulary: Any = None) -> Any:
    return _all_class_names(logits, n_classes, label_vocabulary)


def _all_class_ids(logits: Any, n_classes: int) -> Any:
    ids = tf.range(n_classes)
    return tf.tile(tf.expand_dims(ids, 0), [tf.shape(logits)[0], 1])


def _check_logits_final_dim(logits: Any, expected_logits_dimension: int) -> Any:
    logits = tf.convert_to_tensor(logits)
    last = logits.shape[-1]
    if last is not None and last != expected_logits_dimension:
        raise ValueError(
            f"logits shape must be [D0, D1, ... DN, logits_dimension], got {logits.shape}. "
            f"Expected logits_dimension={expected_logits_dimension}."
        )
    return logits


def _get_weights_and_check_match_logits(
    features: Any, weight_column: Any, logits: Any, allow_per_logit_weights: bool = False
) -> Any:
    if weight_column is None:
        return 1.0
    key = weight_column if isinstance(weight_column, str) else weight_column.key
    weights = tf.cast(tf.convert_to_tensor(features[key]), tf.float32)
    if weights.shape.rank == 1:
        weights = tf.expand_dims(weights, -1)
    return weights


def _check_dense_labels_match_logits_and_reshape(
    labels: Any, logits: Any, expected_labels_dimension: int
) -> Any:
    if labels is None:
        raise ValueError(
            "You must provide a labels Tensor. Given: None. Suggested troubleshooting "
            "steps: Check that your data contain your label feature. Check that your "
            "input_fn properly parses and returns labels."
        )
    if isinstance(labels, tf.SparseTensor):
        raise ValueError(f"SparseTensor labels are not supported. labels: {labels}")
    labels = tf.convert_to_tensor(labels)
    if labels.shape.rank == 1:
        labels = tf.expand_dims(labels, -1)
    last = labels.shape[-1]
    if last is not None and last != expected_labels_dimension:
        raise ValueError(
            f"Mismatched label shape. Expected labels dimension={expected_labels_dimension}. "
            f"Received {last}."
        )
    return labels


def _call_loss_fn(
    loss_fn: Any, labels: Any, logits: Any, features: Any, expected_loss_dim: int = 1
) -> Any:
    _validate_loss_fn_args(loss_fn)
    kwargs = {"features": features} if "features" in _arg_names(loss_fn) else {}
    return loss_fn(labels=labels, logits=logits, **kwargs)


def _arg_names(fn: Any) -> list[str]:
    import inspect

    return list(inspect.signature(fn).parameters)


def _validate_loss_fn_args(loss_fn: Any) -> None:
    args = _arg_names(loss_fn)
    for required in ("labels", "logits"):
        if required not in args:
            raise ValueError(f"loss_fn must contain argument: {required}. Given arguments: {args}")
    invalid = set(args) - {"labels", "logits", "features"}
    if invalid:
        raise ValueError(f"loss_fn has unexpected args: {sorted(invalid)}")


def _append_update_ops(train_op: Any) -> Any:
    update_ops = _V1.get_collection(_V1.GraphKeys.UPDATE_OPS)
    return tf.group(train_op, *update_ops) if update_ops else train_op


def _assert_range(labels: Any, n_classes: int, message: str | None = None) -> Any:
    with tf.control_dependencies(
        [
            tf.debugging.assert_non_negative(labels, message=message or "Labels must be >= 0"),
            tf.debugging.assert_less(
                labels,
                tf.cast(n_classes, labels.dtype),
                message=message or "Labels must be < n_classes",
            ),
        ]
    ):
        return tf.identity(labels)


def _classification_output(scores: Any, n_classes: int, label_vocabulary: Any = None) -> Any:
    from keras_estimator.export.export_outputs import ClassificationOutput

    classes = _all_classes(scores, n_classes, label_vocabulary)
    return ClassificationOutput(scores=scores, classes=classes)


def _create_eval_metrics_tuple(fn: Any, kwargs: dict) -> tuple:
    tensor_kwargs = {k: v for k, v in kwargs.items() if v is not None}
    return fn, tensor_kwargs
