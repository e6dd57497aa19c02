"""`tf.contrib.layers` regularizers: l1, l2, l1_l2, sum, and `apply_regularization`.

A regularizer is a function `weights -> scalar Tensor or None`, as TF1's were; pass it as
`weights_regularizer=` / `regularizer=` of `tf.compat.v1.get_variable`, or to
`apply_regularization`.
"""

from __future__ import annotations

import logging
import numbers
from collections.abc import Callable, Sequence
from typing import Any

import tensorflow as tf

logger = logging.getLogger("keras_estimator")
_V1 = tf.compat.v1
Regularizer = Callable[[Any], Any]


def _check_scale(scale: Any, what: str) -> bool:
    """False when the scale disables the regularizer (a number equal to 0)."""
    if isinstance(scale, numbers.Integral):
        raise ValueError(
            f"{what}: the scale must be a float, not an integer. Fix: write e.g. "
            f"{float(scale)!r}. Received: scale={scale!r}"
        )
    if isinstance(scale, numbers.Real):
        if scale < 0.0:
            raise ValueError(
                f"{what}: the scale must be >= 0. Fix: pass 0.0 or more. Received: scale={scale!r}"
            )
        if scale == 0.0:
            logger.info("Scale of 0 disables regularizer.")
            return False
    return True


def _scaled(kind: str, scale: Any, penalty: Callable, scope: str | None) -> Regularizer:
    if not _check_scale(scale, f"{kind}_regularizer"):
        return lambda _: None

    def regularizer(weights: Any, name: str | None = None) -> tf.Tensor:
        with tf.name_scope(scope or f"{kind}_regularizer") as name:
            my_scale = tf.convert_to_tensor(scale, dtype=weights.dtype.base_dtype, name="scale")
            return tf.multiply(my_scale, penalty(weights), name=name.rstrip("/") or None)

    return regularizer


def l1_regularizer(scale: float, scope: str | None = None) -> Regularizer:
    """`scale * sum(|w|)`.

    Example:
        >>> w = tf.compat.v1.get_variable("w", [3], regularizer=l1_regularizer(0.01))
    """
    return _scaled("l1", scale, lambda w: tf.reduce_sum(tf.abs(w)), scope)


def l2_regularizer(scale: float, scope: str | None = None) -> Regularizer:
    """`scale * sum(w ** 2) / 2` (TF1's `tf.nn.l2_loss`, halved).

    Example:
        >>> w = tf.compat.v1.get_variable("w", [3], regularizer=l2_regularizer(0.01))
    """
    return _scaled("l2", scale, tf.nn.l2_loss, scope)


def sum_regularizer(regularizer_list: Sequence[Regularizer | None],
                    scope: str | None = None) -> Regularizer:  # fmt: skip
    """The sum of the penalties of `regularizer_list` (None entries and results skipped).

    Example:
        >>> reg = sum_regularizer([l1_regularizer(0.1), l2_regularizer(0.1)])
    """
    regularizers = [r for r in regularizer_list if r]

    def regularizer(weights: Any) -> tf.Tensor | None:
        with tf.name_scope(scope or "sum_regularizer") as name:
            penalties = [p for p in (r(weights) for r in regularizers) if p is not None]
            if not penalties:
                return None
            return tf.add_n(penalties, name=name.rstrip("/") or None)

    return regularizer


def l1_l2_regularizer(scale_l1: float = 1.0, scale_l2: float = 1.0,
                      scope: str | None = None) -> Regularizer:  # fmt: skip
    """`l1_regularizer(scale_l1) + l2_regularizer(scale_l2)`.

    Example:
        >>> reg = l1_l2_regularizer(scale_l1=0.01, scale_l2=0.001)
    """
    if isinstance(scale_l1, numbers.Real) and isinstance(scale_l2, numbers.Real):
        if scale_l1 == 0.0 and scale_l2 == 0.0:
            logger.info("Scale of 0 disables regularizer.")
            return lambda _: None
    return sum_regularizer([l1_regularizer(scale_l1), l2_regularizer(scale_l2)],
                           scope=scope or "l1_l2_regularizer")  # fmt: skip


def apply_regularization(regularizer: Regularizer, weights_list: Sequence[Any] | None = None
                         ) -> tf.Tensor:  # fmt: skip
    """Sums `regularizer` over `weights_list` (default: the `WEIGHTS` collection) and adds
    the sum to the `REGULARIZATION_LOSSES` collection.

    Example:
        >>> penalty = apply_regularization(l2_regularizer(1e-4), tf.compat.v1.trainable_variables())
    """
    if not weights_list:
        weights_list = _V1.get_collection(_V1.GraphKeys.WEIGHTS)
    if not weights_list:
        raise ValueError(
            "No weights to regularize. Fix: pass weights_list=, or add the weights to the "
            "tf.compat.v1.GraphKeys.WEIGHTS collection. Received: weights_list=None"
        )
    with tf.name_scope("get_regularization_penalty") as scope:
        penalties = [regularizer(w) for w in weights_list]
        penalties = [tf.constant(0.0) if p is None else p for p in penalties]
        for penalty in penalties:
            if penalty.shape.rank != 0:
                raise ValueError(
                    "The regularizer must return a scalar Tensor. Fix: reduce its result "
                    f"(e.g. tf.reduce_sum). Received: rank={penalty.shape.rank}"
                )
        summed = tf.add_n(penalties, name=scope.rstrip("/"))
        _V1.add_to_collection(_V1.GraphKeys.REGULARIZATION_LOSSES, summed)
        return summed


__all__ = [
    "apply_regularization",
    "l1_l2_regularizer",
    "l1_regularizer",
    "l2_regularizer",
    "sum_regularizer",
]
