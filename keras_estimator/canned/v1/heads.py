"""The heads of tf.estimator 2.15's v1 canned estimators (its `head.py` `_Head`s).

They predict, and report metrics under the same keys, as the v2 heads; what differs is
the training loss and how it is minimised:

- `loss_reduction` is one of `tf.compat.v1.losses.Reduction` (default `SUM`: the weighted
  loss is summed over the batch, so gradients grow with the batch size) and the loss is
  reduced by `tf.compat.v1.losses.compute_weighted_loss`, as 2.15 did;
- an `optimizer` is a `tf.compat.v1.train.Optimizer`, applied with
  `optimizer.minimize(loss, global_step=get_global_step())` in the head's name scope, and
  the `UPDATE_OPS` (batch normalization) run with the train op.
"""

from __future__ import annotations

from typing import Any

import tensorflow as tf

from keras_estimator.canned.heads import BinaryClassHead, MultiClassHead, RegressionHead, base_head

_V1 = tf.compat.v1
SUM = _V1.losses.Reduction.SUM


def check_loss_reduction(loss_reduction: Any) -> str:
    """A `tf.compat.v1.losses.Reduction` other than NONE, or tf.estimator 2.15's error."""
    reductions = _V1.losses.Reduction
    if loss_reduction not in reductions.all() or loss_reduction == reductions.NONE:
        raise ValueError(
            f"Invalid loss_reduction: {loss_reduction}. Expected one of "
            f"tf.compat.v1.losses.Reduction other than NONE (the v1 canned estimators' "
            f"default is SUM). Received: loss_reduction={loss_reduction!r}"
        )
    return loss_reduction


class _V1Training:
    """What the v1 heads change in `base_head.Head`: the reduction and the train op."""

    _loss_reduction: str
    _name: str | None

    def _use_v1_reduction(self, loss_reduction: Any) -> None:
        self._loss_reduction = check_loss_reduction(loss_reduction)

    def _reduce(self, unweighted: tf.Tensor, weights: tf.Tensor) -> tf.Tensor:
        return _V1.losses.compute_weighted_loss(
            unweighted, weights=weights, reduction=self._loss_reduction
        )

    def _train_op(self, loss, optimizer, trainable_variables, train_op_fn, update_ops) -> Any:
        if optimizer is not None and train_op_fn is not None:
            raise ValueError("train_op_fn and optimizer cannot both be set.")
        # In the head's name scope, entered again (2.15 built the whole spec in one):
        # an optimizer's non-slot variables are `<scope>/head/beta1_power`, as there.
        graph = _V1.get_default_graph()
        scope = graph.get_name_scope()
        prefix = f"{scope}/" if scope else ""
        with graph.name_scope(f"{prefix}{self._name or 'head'}/"):
            if optimizer is not None:
                train_op = optimizer.minimize(
                    loss, global_step=_V1.train.get_global_step(), var_list=trainable_variables
                )
            elif train_op_fn is not None:
                train_op = train_op_fn(loss)
            else:
                raise ValueError("train_op_fn and optimizer cannot both be None.")
            update_ops = list(update_ops or []) + _V1.get_collection(_V1.GraphKeys.UPDATE_OPS)
            if update_ops:
                train_op = tf.group(train_op, *update_ops)
        return train_op


class V1BinaryClassHead(_V1Training, BinaryClassHead):
    """tf.estimator 2.15's v1 binary logistic head (sigmoid cross-entropy, summed)."""

    def __init__(self, weight_column: Any = None, label_vocabulary: Any = None,
                 loss_reduction: Any = SUM, name: str | None = None) -> None:  # fmt: skip
        super().__init__(weight_column, None, label_vocabulary, base_head.SUM, None, name)
        self._use_v1_reduction(loss_reduction)


class V1MultiClassHead(_V1Training, MultiClassHead):
    """tf.estimator 2.15's v1 multi-class head (softmax cross-entropy, summed)."""

    def __init__(self, n_classes: int, weight_column: Any = None, label_vocabulary: Any = None,
                 loss_reduction: Any = SUM, name: str | None = None) -> None:  # fmt: skip
        super().__init__(n_classes, weight_column, label_vocabulary, base_head.SUM, None, name)
        self._use_v1_reduction(loss_reduction)


class V1RegressionHead(_V1Training, RegressionHead):
    """tf.estimator 2.15's v1 regression head (squared error, summed)."""

    def __init__(self, label_dimension: int = 1, weight_column: Any = None,
                 loss_reduction: Any = SUM, name: str | None = None) -> None:  # fmt: skip
        super().__init__(label_dimension, weight_column, base_head.SUM, None, None, name)
        self._use_v1_reduction(loss_reduction)


def classification_head(
    n_classes: int, weight_column: Any, label_vocabulary: Any, loss_reduction: Any
) -> Any:
    """Binary for 2 classes, multi-class for more: 2.15's `_binary_logistic_or_multi_class_head`."""
    if n_classes is None or n_classes < 2:
        raise ValueError(
            f"n_classes must be > 1: {n_classes}. Expected n_classes >= 2 (2 for binary "
            f"classification). Received: n_classes={n_classes!r}"
        )
    if label_vocabulary is not None and not isinstance(label_vocabulary, list | tuple):
        raise ValueError(
            f"label_vocabulary should be a list or a tuple. Given type: {type(label_vocabulary)}"
        )
    check_loss_reduction(loss_reduction)
    if n_classes == 2:
        return V1BinaryClassHead(weight_column, label_vocabulary, loss_reduction)
    return V1MultiClassHead(n_classes, weight_column, label_vocabulary, loss_reduction)


def regression_head(label_dimension: int, weight_column: Any, loss_reduction: Any) -> Any:
    """2.15's v1 `_regression_head`."""
    return V1RegressionHead(label_dimension, weight_column, loss_reduction)
