"""`tf.contrib.layers` initializers: `xavier_initializer`, `variance_scaling_initializer`.

They return TF1 initializer functions `(shape, dtype, partition_info) -> Tensor` with
contrib's own formulas (its truncated normal used stddev sqrt(1.3 * factor / n), not
tf.compat.v1.variance_scaling_initializer's), so a seeded graph draws the values TF1 drew.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import tensorflow as tf

_MODES = ("FAN_IN", "FAN_OUT", "FAN_AVG")


def variance_scaling_initializer(
    factor: float = 2.0,
    mode: str = "FAN_IN",
    uniform: bool = False,
    seed: int | None = None,
    dtype: tf.DType = tf.float32,
) -> Callable[..., tf.Tensor]:
    """Values with variance `factor / n`, n the fan in, fan out or their mean.

    Uniform in [-sqrt(3 factor / n), +sqrt(3 factor / n)], else a normal truncated at two
    standard deviations with stddev sqrt(1.3 factor / n). The defaults are He et al.'s.

    Example:
        >>> init = variance_scaling_initializer(factor=1.0, mode="FAN_AVG", uniform=True)
        >>> w = tf.compat.v1.get_variable("w", [784, 10], initializer=init)
    """
    dtype = tf.as_dtype(dtype)
    if not dtype.is_floating:
        raise TypeError(
            "variance_scaling_initializer makes floating point values only. Fix: pass a "
            f"floating dtype such as tf.float32. Received: dtype={dtype!r}"
        )
    if mode not in _MODES:
        raise TypeError(f"Unknown mode. Expected one of {list(_MODES)}. Received: mode={mode!r}")

    def _initializer(shape: Any, dtype: tf.DType = dtype, partition_info: Any = None) -> Any:
        del partition_info  # contrib's initializer sized a partition by its own shape
        shape = [int(d) for d in tf.TensorShape(shape).as_list()]
        fan_in = fan_out = 1.0
        if shape:
            fan_in = float(shape[-2] if len(shape) > 1 else shape[-1])
            fan_out = float(shape[-1])
            for dim in shape[:-2]:
                fan_in *= dim
                fan_out *= dim
        n = {"FAN_IN": fan_in, "FAN_OUT": fan_out, "FAN_AVG": (fan_in + fan_out) / 2.0}[mode]
        if uniform:
            limit = math.sqrt(3.0 * factor / n)
            return tf.compat.v1.random_uniform(shape, -limit, limit, dtype, seed=seed)
        stddev = math.sqrt(1.3 * factor / n)
        return tf.compat.v1.truncated_normal(shape, 0.0, stddev, dtype, seed=seed)

    return _initializer


def xavier_initializer(
    uniform: bool = True, seed: int | None = None, dtype: tf.DType = tf.float32
) -> Callable[..., tf.Tensor]:
    """Glorot & Bengio's initializer: `variance_scaling_initializer(1.0, "FAN_AVG", uniform)`.

    Example:
        >>> w = tf.compat.v1.get_variable("w", [784, 10], initializer=xavier_initializer())
    """
    return variance_scaling_initializer(factor=1.0, mode="FAN_AVG", uniform=uniform,
                                        seed=seed, dtype=dtype)  # fmt: skip


xavier_initializer_conv2d = xavier_initializer

__all__ = ["variance_scaling_initializer", "xavier_initializer", "xavier_initializer_conv2d"]
