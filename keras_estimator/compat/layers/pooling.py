"""tf.compat.v1.layers pooling: max/average pooling in 1, 2 and 3 dimensions."""

from __future__ import annotations

from typing import Any

import tensorflow as tf

from keras_estimator.compat.layers.base import Layer
from keras_estimator.compat.layers.convolutional import _tf_format, _tuple


class _Pooling(Layer):
    _rank = 2
    _kind = "MAX"

    def __init__(
        self,
        pool_size: Any,
        strides: Any,
        padding: str = "valid",
        data_format: str = "channels_last",
        name: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(name=name, **kwargs)
        self.pool_size = _tuple(pool_size, self._rank, "pool_size")
        self.strides = _tuple(strides, self._rank, "strides")
        self.padding = padding.upper()
        if self.padding not in ("VALID", "SAME"):
            raise ValueError(
                "padding must be 'valid' or 'same', but it is neither. Fix: pass "
                f"padding='valid' or padding='same'. Received: padding={padding!r}"
            )
        self.data_format = data_format
        self._format = _tf_format(data_format, self._rank)

    def call(self, inputs: tf.Tensor) -> tf.Tensor:
        return tf.nn.pool(
            inputs,
            window_shape=self.pool_size,
            pooling_type="MAX" if self._kind == "MAX" else "AVG",
            strides=self.strides,
            padding=self.padding,
            data_format=self._format,
        )


def _make(rank: int, kind: str, name: str, base: str) -> type:
    return type(name, (_Pooling,), {"_rank": rank, "_kind": kind, "_base_name": base})


MaxPooling1D = _make(1, "MAX", "MaxPooling1D", "max_pooling1d")
MaxPooling2D = _make(2, "MAX", "MaxPooling2D", "max_pooling2d")
MaxPooling3D = _make(3, "MAX", "MaxPooling3D", "max_pooling3d")
AveragePooling1D = _make(1, "AVG", "AveragePooling1D", "average_pooling1d")
AveragePooling2D = _make(2, "AVG", "AveragePooling2D", "average_pooling2d")
AveragePooling3D = _make(3, "AVG", "AveragePooling3D", "average_pooling3d")


def _functional(cls: type) -> Any:
    def pool(
        inputs: tf.Tensor,
        pool_size: Any,
        strides: Any,
        padding: str = "valid",
        data_format: str = "channels_last",
        name: str | None = None,
    ) -> tf.Tensor:
        return cls(pool_size, strides, padding=padding, data_format=data_format, name=name)(inputs)

    pool.__doc__ = f"Functional interface of `{cls.__name__}`."
    return pool


max_pooling1d = _functional(MaxPooling1D)
max_pooling2d = _functional(MaxPooling2D)
max_pooling3d = _functional(MaxPooling3D)
average_pooling1d = _functional(AveragePooling1D)
average_pooling2d = _functional(AveragePooling2D)
average_pooling3d = _functional(AveragePooling3D)
