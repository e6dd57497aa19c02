"""2.15's `head/base_head`: the v2 `Head` interface, its serving keys, and the helpers
heads (and libraries' custom heads) are written with."""

from __future__ import annotations

from typing import Any

import keras
import tensorflow as tf

from keras_estimator.canned.heads.base_head import (
    CLASSIFY,
    PREDICT,
    REGRESS,
    SERVING_DEFAULT,
    Head,
    check_loss_reduction,
)
from keras_estimator.dropin.estimator_tree.canned.head import (
    _all_class_ids,
    _all_classes,
    _assert_range,
    _call_loss_fn,
    _check_dense_labels_match_logits_and_reshape,
    _check_logits_final_dim,
    _classification_output,
    _create_eval_metrics_tuple,
    _get_weights_and_check_match_logits,
    _validate_loss_fn_args,
)

DEFAULT_SERVING_KEY = SERVING_DEFAULT
CLASSIFY_SERVING_KEY = CLASSIFY
REGRESS_SERVING_KEY = REGRESS
PREDICT_SERVING_KEY = PREDICT

__all__ = [
    "CLASSIFY_SERVING_KEY",
    "DEFAULT_SERVING_KEY",
    "Head",
    "PREDICT_SERVING_KEY",
    "REGRESS_SERVING_KEY",
]

all_class_ids = _all_class_ids
all_classes = _all_classes
call_loss_fn = _call_loss_fn
check_dense_labels_match_logits_and_reshape = _check_dense_labels_match_logits_and_reshape
check_logits_final_dim = _check_logits_final_dim
classification_output = _classification_output
create_eval_metrics_tuple = _create_eval_metrics_tuple
get_weights_and_check_match_logits = _get_weights_and_check_match_logits
validate_loss_fn_args = _validate_loss_fn_args


def check_label_range(labels: Any, n_classes: int, message: str | None = None) -> Any:
    """`labels`, with a check that each is in [0, n_classes)."""
    return _assert_range(labels, n_classes, message)


def check_prediction_keys(pred_keys: Any, valid_keys: Any) -> None:
    for key in pred_keys or []:
        if key not in valid_keys:
            raise ValueError(
                f"Prediction key must be in PredictionKeys, given: {key}. Valid "
                f"prediction keys include {valid_keys}."
            )


def validate_loss_reduction(loss_reduction: Any) -> None:
    check_loss_reduction(loss_reduction)


def validate_n_classes(n_classes: Any) -> int:
    if isinstance(n_classes, int) and n_classes <= 2:
        raise ValueError(f"n_classes must be > 2: {n_classes}.")
    return n_classes


def validate_trainable_variables(trainable_variables: Any = None) -> None:
    if trainable_variables is None:
        raise ValueError(f"trainable_variables cannot be None. Given {trainable_variables}")
    if not isinstance(trainable_variables, list | tuple):
        raise ValueError(
            f"trainable_variables should be a list or a tuple. Given type: "
            f"{type(trainable_variables)}."
        )


def validate_update_ops(update_ops: Any = None) -> None:
    if update_ops is not None and not isinstance(update_ops, list | tuple):
        raise ValueError(f"update_ops should be a list or a tuple. Given type: {type(update_ops)}.")


def validate_v2_optimizer(optimizer: Any) -> None:
    if not isinstance(optimizer, keras.optimizers.Optimizer):
        raise ValueError(
            f"The given optimizer is not a tf.keras.optimizers.Optimizer "
            f"instance. Given: {optimizer}"
        )


def update_metric_with_broadcast_weights(eval_metric: Any, values: Any, weights: Any) -> Any:
    """`eval_metric` updated with `values`, `weights` broadcast to their shape."""
    values = tf.cast(values, tf.float32)
    if weights is not None:
        weights = tf.broadcast_to(tf.cast(weights, tf.float32), tf.shape(values))
    eval_metric.update_state(values=values, sample_weight=weights)
    return eval_metric


def create_estimator_spec_summary(
    regularized_training_loss: Any, regularization_losses: Any = None, summary_key_fn: Any = None
) -> None:
    """The loss summaries of a training spec (`loss`, `regularization_loss`)."""
    key = summary_key_fn or (lambda name: name)
    tf.compat.v1.summary.scalar(key("loss"), regularized_training_loss)
    if regularization_losses is not None:
        tf.compat.v1.summary.scalar(key("regularization_loss"), tf.add_n(regularization_losses))


def create_estimator_spec_train_op(
    head_name: Any,
    optimizer: Any = None,
    trainable_variables: Any = None,
    train_op_fn: Any = None,
    update_ops: Any = None,
    regularized_training_loss: Any = None,
    loss_reduction: Any = "sum_over_batch_size",
) -> Any:
    """The train op of a spec: the optimizer's update, or `train_op_fn(loss)`, plus the
    update ops."""
    del head_name
    validate_update_ops(update_ops)
    head = Head(loss_reduction=loss_reduction)
    if optimizer is not None:
        validate_v2_optimizer(optimizer)
        validate_trainable_variables(trainable_variables)
    return head._train_op(
        regularized_training_loss, optimizer, trainable_variables, train_op_fn, update_ops
    )
