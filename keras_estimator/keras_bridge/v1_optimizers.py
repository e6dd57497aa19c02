"""`tf.compat.v1.train` optimizers as the Keras 3 optimizers with the same settings.

tf.keras 2's `Model.compile(optimizer=tf.compat.v1.train.RMSPropOptimizer(0.01))` took a
TF1 optimizer (wrapping it), and `model_to_estimator` trained with it. Keras 3 refuses any
optimizer not its own; under `install()` its `compile` gets the Keras 3 class applying the
same update with the same hyperparameters (`decay` -> `rho`, `beta1` -> `beta_1`, ...).

Example:
    >>> keras_optimizer_from_v1(tf.compat.v1.train.RMSPropOptimizer(0.01, momentum=0.5))
    <keras.src.optimizers.rmsprop.RMSprop ...>   # learning_rate=0.01, rho=0.9, momentum=0.5
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import keras
import tensorflow as tf

from keras_estimator.seam.internals import keras_optimizer_identifiers, v1_optimizer_settings
from keras_estimator.seam.patching import AttributePatch


def _adam(s: dict) -> keras.optimizers.Optimizer:
    return keras.optimizers.Adam(s["learning_rate"], s["beta1"], s["beta2"], s["epsilon"])


def _rmsprop(s: dict) -> keras.optimizers.Optimizer:
    return keras.optimizers.RMSprop(
        s["learning_rate"], rho=s["decay"], momentum=s["momentum"], epsilon=s["epsilon"],
        centered=s["centered"],
    )  # fmt: skip


def _ftrl(s: dict) -> keras.optimizers.Optimizer:
    return keras.optimizers.Ftrl(**s)


# tf.compat.v1.train class name -> its Keras 3 counterpart made from its settings.
_COUNTERPARTS: dict[str, Callable[[dict], keras.optimizers.Optimizer]] = {
    "GradientDescentOptimizer": lambda s: keras.optimizers.SGD(s["learning_rate"]),
    "MomentumOptimizer": lambda s: keras.optimizers.SGD(
        s["learning_rate"], momentum=s["momentum"], nesterov=s["use_nesterov"]
    ),
    "AdamOptimizer": _adam,
    "RMSPropOptimizer": _rmsprop,
    "AdagradOptimizer": lambda s: keras.optimizers.Adagrad(
        s["learning_rate"], initial_accumulator_value=s["initial_accumulator_value"]
    ),
    "AdadeltaOptimizer": lambda s: keras.optimizers.Adadelta(
        s["learning_rate"], rho=s["rho"], epsilon=s["epsilon"]
    ),
    "FtrlOptimizer": _ftrl,
}


def _plain_number(value: Any) -> Any:
    """A Python number for a constant tensor / numpy scalar; callables and schedules as is."""
    if isinstance(value, (tf.Tensor, tf.Variable)) or hasattr(value, "dtype"):
        constant = tf.get_static_value(value)
        if constant is None:
            return value
        return constant.item() if hasattr(constant, "item") else constant
    return value


def keras_optimizer_from_v1(optimizer: Any) -> keras.optimizers.Optimizer | None:
    """The Keras 3 optimizer doing what a `tf.compat.v1.train` optimizer does.

    Args:
        optimizer: Anything `Model.compile(optimizer=...)` was given.

    Returns:
        A new Keras 3 optimizer with the same hyperparameters, or None when `optimizer` is
        not a `tf.compat.v1.train.Optimizer` (left to Keras).

    Raises:
        ValueError: A v1 optimizer with no Keras 3 counterpart (ProximalAdagrad,
            SyncReplicasOptimizer, ...) or a learning rate that is a tensor computed in a
            graph.
    """
    if not isinstance(optimizer, tf.compat.v1.train.Optimizer):
        return None
    name = type(optimizer).__name__
    settings = v1_optimizer_settings(optimizer)
    counterpart = _COUNTERPARTS.get(name)
    if settings is None or counterpart is None:
        raise ValueError(
            f"Keras 3 `compile()` cannot train with tf.compat.v1.train.{name}: keras_estimator "
            "maps only the v1 optimizers Keras 3 has an equivalent of (GradientDescent, "
            "Momentum, Adam, RMSProp, Adagrad, Adadelta, Ftrl). Fix: pass a keras.optimizers "
            f"optimizer to compile(). Received: optimizer={optimizer!r}"
        )
    settings = {key: _plain_number(value) for key, value in settings.items()}
    learning_rate = settings["learning_rate"]
    if isinstance(learning_rate, (tf.Tensor, tf.Variable)):
        raise ValueError(
            f"tf.compat.v1.train.{name}'s learning rate is a tensor computed in a graph "
            "(e.g. tf.compat.v1.train.exponential_decay), which a Keras 3 optimizer cannot "
            "take. Expected a number or a keras.optimizers.schedules.LearningRateSchedule. "
            f"Fix: pass one of those. Received: learning_rate={learning_rate!r}"
        )
    return counterpart(settings)


def v1_optimizers_in_compile() -> AttributePatch:
    """Until `.undo()`: Keras 3's `compile(optimizer=...)` takes `tf.compat.v1.train`
    optimizers (as their Keras 3 counterparts)."""
    return keras_optimizer_identifiers(keras_optimizer_from_v1)


__all__ = ["keras_optimizer_from_v1", "v1_optimizers_in_compile"]
