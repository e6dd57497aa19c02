"""The v1 canned estimators' optimizers: `tf.compat.v1.train` ones, as tf.estimator 2.15's
`optimizers.get_optimizer_instance` chose them."""

from __future__ import annotations

from typing import Any

import tensorflow as tf

_V1 = tf.compat.v1

# tf.estimator 2.15's names for optimizers given as strings (v1 canned estimators).
OPTIMIZER_NAMES: dict[str, Any] = {
    "Adagrad": _V1.train.AdagradOptimizer,
    "Adam": _V1.train.AdamOptimizer,
    "Ftrl": _V1.train.FtrlOptimizer,
    "RMSProp": _V1.train.RMSPropOptimizer,
    "SGD": _V1.train.GradientDescentOptimizer,
}


def check_optimizer_name(optimizer: Any) -> None:
    """tf.estimator 2.15's error for an unknown optimizer name (raised at construction)."""
    if isinstance(optimizer, str) and optimizer not in OPTIMIZER_NAMES:
        raise ValueError(
            f"Unsupported optimizer name: {optimizer}. Supported names are: "
            f"{tuple(sorted(OPTIMIZER_NAMES))}. Received: optimizer={optimizer!r}"
        )


def get_optimizer_instance(optimizer: Any, learning_rate: float) -> Any:
    """A `tf.compat.v1.train.Optimizer` for what a v1 canned estimator was given.

    Args:
        optimizer: A name in `OPTIMIZER_NAMES` (made with `learning_rate`), a
            `tf.compat.v1.train.Optimizer`, or a callable returning one.
        learning_rate: The estimator's default learning rate for a name.

    Example:
        >>> get_optimizer_instance("Adagrad", 0.05)  # tf.compat.v1.train.AdagradOptimizer
    """
    if isinstance(optimizer, str):
        check_optimizer_name(optimizer)
        return OPTIMIZER_NAMES[optimizer](learning_rate=learning_rate)
    if callable(optimizer) and not isinstance(optimizer, _V1.train.Optimizer):
        optimizer = optimizer()
    if not isinstance(optimizer, _V1.train.Optimizer):
        raise ValueError(
            f"The given object is not an Optimizer instance. Given: {optimizer}. The v1 "
            "canned estimators (tf.compat.v1.estimator) train with tf.compat.v1.train "
            f"optimizers; expected one of {tuple(sorted(OPTIMIZER_NAMES))}, a "
            "tf.compat.v1.train.Optimizer or a callable returning one (Keras optimizers "
            f"go to the v2 classes, keras_estimator.DNNClassifier ...). Received: "
            f"optimizer={optimizer!r}"
        )
    return optimizer
