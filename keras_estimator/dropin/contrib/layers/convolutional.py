"""`tf.contrib.layers` convolutions and pooling: conv1d/conv2d/conv3d, max/avg_pool2d.

Variables keep contrib's names (`Conv/weights` `[*kernel_size, in, out]`, `Conv/biases`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tensorflow as tf

from keras_estimator.dropin.contrib.arg_scope import arg_scoped
from keras_estimator.dropin.contrib.layers.initializers import xavier_initializer
from keras_estimator.dropin.contrib.layers.variables import (
    add_biases,
    collect_named_outputs,
    finish_layer,
    model_variable,
    variable_collections,
)

_V1 = tf.compat.v1
_FORMATS = {3: ("NWC", "NCW"), 4: ("NHWC", "NCHW"), 5: ("NDHWC", "NCDHW")}


def _tuple(value: Any, size: int, name: str) -> list[int]:
    values = [int(v) for v in value] if isinstance(value, (list, tuple)) else [int(value)] * size
    if len(values) != size:
        raise ValueError(
            f"{name} must be an int or {size} ints. Fix: pass e.g. {[3] * size}. "
            f"Received: {name}={value!r}"
        )
    return values


@arg_scoped
def convolution(
    inputs: Any,
    num_outputs: int,
    kernel_size: Any,
    stride: Any = 1,
    padding: str = "SAME",
    data_format: str | None = None,
    rate: Any = 1,
    activation_fn: Callable | None = tf.nn.relu,
    normalizer_fn: Callable | None = None,
    normalizer_params: dict | None = None,
    weights_initializer: Any = xavier_initializer(),  # noqa: B008  (contrib's default)
    weights_regularizer: Any = None,
    biases_initializer: Any = _V1.zeros_initializer(),  # noqa: B008
    biases_regularizer: Any = None,
    reuse: Any = None,
    variables_collections: Any = None,
    outputs_collections: Any = None,
    trainable: bool = True,
    scope: str | None = None,
    conv_dims: int | None = None,
) -> tf.Tensor:
    """An N-D convolution (N from the rank of `inputs`), contrib's `convolution`.

    Example:
        >>> net = conv2d(images, 32, [3, 3], scope="conv1")   # conv1/weights [3, 3, C, 32]
    """
    with _V1.variable_scope(scope, "Conv", [inputs], reuse=reuse) as sc:
        inputs = tf.convert_to_tensor(inputs)
        rank = inputs.shape.rank
        if conv_dims is not None and conv_dims + 2 != rank:
            raise ValueError(
                f"Convolution expects input with rank {conv_dims + 2}. Fix: reshape the "
                f"inputs. Received: inputs.shape={inputs.shape}"
            )
        if rank not in _FORMATS:
            raise ValueError(
                "Convolution is supported for inputs of rank 3, 4 or 5. Fix: reshape the "
                f"inputs. Received: inputs.shape={inputs.shape}"
            )
        channels_first = data_format is not None and data_format.startswith("NC")
        data_format = _FORMATS[rank][1 if channels_first else 0]
        spatial = rank - 2
        in_channels = inputs.shape[1 if channels_first else -1]
        if in_channels is None:
            raise ValueError(
                "The channel dimension of the inputs must be known. Fix: set it (set_shape). "
                f"Received: inputs.shape={inputs.shape}"
            )
        dtype = inputs.dtype.base_dtype
        kernel = _tuple(kernel_size, spatial, "kernel_size")
        weights = model_variable(
            "weights",
            [*kernel, int(in_channels), num_outputs],
            dtype,
            weights_initializer,
            weights_regularizer,
            trainable,
            variable_collections(variables_collections, "weights"),
        )
        outputs = tf.nn.convolution(
            inputs, weights, strides=_tuple(stride, spatial, "stride"), padding=padding.upper(),
            data_format=data_format, dilations=_tuple(rate, spatial, "rate"),
        )  # fmt: skip
        outputs = add_biases(outputs, num_outputs, dtype, normalizer_fn, biases_initializer,
                             biases_regularizer, trainable, variables_collections,
                             "NCHW" if channels_first else None)  # fmt: skip
        return finish_layer(outputs, normalizer_fn, normalizer_params, activation_fn,
                            outputs_collections, sc.name)  # fmt: skip


@arg_scoped
def conv1d(inputs: Any, num_outputs: int, kernel_size: Any, **kwargs: Any) -> tf.Tensor:
    """`convolution` over `[batch, width, channels]` inputs."""
    return convolution(inputs, num_outputs, kernel_size, conv_dims=1, **kwargs)


@arg_scoped
def conv2d(inputs: Any, num_outputs: int, kernel_size: Any, **kwargs: Any) -> tf.Tensor:
    """`convolution` over `[batch, height, width, channels]` inputs (or NCHW).

    Example:
        >>> net = conv2d(images, 64, 3, stride=2, padding="VALID")
    """
    return convolution(inputs, num_outputs, kernel_size, conv_dims=2, **kwargs)


@arg_scoped
def conv3d(inputs: Any, num_outputs: int, kernel_size: Any, **kwargs: Any) -> tf.Tensor:
    """`convolution` over `[batch, depth, height, width, channels]` inputs."""
    return convolution(inputs, num_outputs, kernel_size, conv_dims=3, **kwargs)


def _pool(kind: str, default_scope: str, inputs: Any, kernel_size: Any, stride: Any,
          padding: str, data_format: str, outputs_collections: Any, scope: str | None
          ) -> tf.Tensor:  # fmt: skip
    if data_format not in ("NHWC", "NCHW"):
        raise ValueError(
            "data_format has to be either NCHW or NHWC. Fix: pass one of them. "
            f"Received: data_format={data_format!r}"
        )
    with tf.name_scope(scope or default_scope) as sc:
        inputs = tf.convert_to_tensor(inputs)
        window = _tuple(kernel_size, 2, "kernel_size")
        strides = _tuple(stride, 2, "stride")
        if data_format == "NHWC":
            ksize, strides = [1, *window, 1], [1, *strides, 1]
        else:
            ksize, strides = [1, 1, *window], [1, 1, *strides]
        pool = tf.nn.max_pool2d if kind == "max" else tf.nn.avg_pool2d
        outputs = pool(inputs, ksize, strides, padding.upper(), data_format=data_format)
        return collect_named_outputs(outputs_collections, sc.rstrip("/"), outputs)


@arg_scoped
def max_pool2d(inputs: Any, kernel_size: Any, stride: Any = 2, padding: str = "VALID",
               data_format: str = "NHWC", outputs_collections: Any = None,
               scope: str | None = None) -> tf.Tensor:  # fmt: skip
    """2-D max pooling (contrib's defaults: stride 2, VALID).

    Example:
        >>> net = max_pool2d(net, [2, 2])
    """
    return _pool("max", "MaxPool2D", inputs, kernel_size, stride, padding, data_format,
                 outputs_collections, scope)  # fmt: skip


@arg_scoped
def avg_pool2d(inputs: Any, kernel_size: Any, stride: Any = 2, padding: str = "VALID",
               data_format: str = "NHWC", outputs_collections: Any = None,
               scope: str | None = None) -> tf.Tensor:  # fmt: skip
    """2-D average pooling (contrib's defaults: stride 2, VALID).

    Example:
        >>> net = avg_pool2d(net, [7, 7], stride=1)
    """
    return _pool("avg", "AvgPool2D", inputs, kernel_size, stride, padding, data_format,
                 outputs_collections, scope)  # fmt: skip


convolution2d = conv2d
convolution1d = conv1d
convolution3d = conv3d

__all__ = [
    "avg_pool2d",
    "conv1d",
    "conv2d",
    "conv3d",
    "convolution",
    "convolution1d",
    "convolution2d",
    "convolution3d",
    "max_pool2d",
]
