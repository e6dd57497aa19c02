"""What the canned estimators share: choosing the head, training with their optimizers."""

from __future__ import annotations

from typing import Any

import tensorflow as tf

from keras_estimator.canned import optimizers as optimizers_lib
from keras_estimator.canned.heads import BinaryClassHead, MultiClassHead, RegressionHead
from keras_estimator.canned.heads.base_head import SUM_OVER_BATCH_SIZE, check_loss_reduction
from keras_estimator.spec.estimator_spec import EstimatorSpec
from keras_estimator.spec.mode_keys import ModeKeys

_V1 = tf.compat.v1


def classification_head(
    n_classes: int, weight_column: Any, label_vocabulary: Any, loss_reduction: Any
) -> Any:
    """BinaryClassHead for 2 classes, MultiClassHead for more (tf.estimator's choice)."""
    if n_classes is None or n_classes < 2:
        raise ValueError(
            f"n_classes must be > 2: {n_classes}. Expected n_classes >= 2 (2 for binary "
            "classification)."
        )
    check_loss_reduction(loss_reduction)
    if n_classes == 2:
        return BinaryClassHead(weight_column, label_vocabulary=label_vocabulary,
                               loss_reduction=loss_reduction)  # fmt: skip
    return MultiClassHead(n_classes, weight_column, label_vocabulary, loss_reduction)


def regression_head(label_dimension: int, weight_column: Any, loss_reduction: Any) -> Any:
    return RegressionHead(label_dimension, weight_column, loss_reduction)


def check_optimizer(optimizer: Any) -> None:
    """Early check of what can be checked before the model_fn runs (unknown names)."""
    optimizers_lib.check_optimizer_name(optimizer)


def spec_with_optimizers(
    head: Any,
    features: dict,
    mode: str,
    logits: tf.Tensor,
    labels: Any,
    parts: list[tuple[Any, float | None, str, bool]],
) -> EstimatorSpec:
    """The head's spec, trained by one optimizer per part of the model.

    `parts` are `(optimizer, default learning rate, variable scope, own iterations)`: each
    optimizer trains the trainable variables under its scope; the global step is the
    iteration count of the parts without their own.
    """

    def train_op_fn(loss: tf.Tensor) -> tf.Operation:
        train_ops, names = [], set()
        for optimizer, learning_rate, scope, own_iterations in parts:
            resolved = optimizers_lib.resolve_optimizer(optimizer, learning_rate)
            if isinstance(resolved, optimizers_lib.LegacyOptimizer):
                if resolved.name in names:  # a second of the same class: "Adagrad_1"
                    resolved.name = f"{resolved.name}_1"
                names.add(resolved.name)
            if own_iterations and isinstance(resolved, optimizers_lib.LegacyOptimizer):
                resolved.own_iterations = True
            variables = _V1.get_collection(_V1.GraphKeys.TRAINABLE_VARIABLES, scope=scope)
            if variables:
                mean_loss = head.loss_reduction == SUM_OVER_BATCH_SIZE
                train_ops.append(optimizers_lib.minimize(resolved, loss, variables, mean_loss))
        update_ops = _V1.get_collection(_V1.GraphKeys.UPDATE_OPS)
        return tf.group(*train_ops, *update_ops)

    if mode == ModeKeys.TRAIN:
        return head.create_estimator_spec(features, mode, logits, labels, train_op_fn=train_op_fn)
    return head.create_estimator_spec(features, mode, logits, labels)
