"""tf.compat.v1.layers convolutions: conv1d/2d/3d, conv2d_transpose, separable_conv2d."""

from __future__ import annotations

from typing import Any

import tensorflow as tf

from keras_estimator.compat.layers.base import Layer, initializer, resolve_activation

_ZEROS = tf.compat.v1.zeros_initializer()


def _tuple(value: Any, rank: int, what: str) -> tuple[int, ...]:
    if isinstance(value, int):
        return (value,) * rank
    value = tuple(int(v) for v in value)
    if len(value) != rank:
        raise ValueError(
            f"The `{what}` argument must be a tuple of {rank} integers. Fix: pass one "
            f"integer, or {rank} of them. Received: {what}={value}"
        )
    return value


def _tf_format(data_format: str, rank: int) -> str:
    if data_format not in ("channels_last", "channels_first"):
        raise ValueError(
            "data_format must be 'channels_last' or 'channels_first', but it is neither. Fix: "
            f"pass one of those. Received: data_format={data_format!r}"
        )
    last = {1: "NWC", 2: "NHWC", 3: "NDHWC"}[rank]
    first = {1: "NCW", 2: "NCHW", 3: "NCDHW"}[rank]
    return last if data_format == "channels_last" else first


class _Conv(Layer):
    """N-D convolution with `kernel` [*kernel_size, in, filters] and `bias` [filters]."""

    _rank = 2

    def __init__(
        self,
        filters: int,
        kernel_size: Any,
        strides: Any = 1,
        padding: str = "valid",
        data_format: str = "channels_last",
        dilation_rate: Any = 1,
        activation: Any = None,
        use_bias: bool = True,
        kernel_initializer: Any = None,
        bias_initializer: Any = _ZEROS,
        kernel_regularizer: Any = None,
        bias_regularizer: Any = None,
        activity_regularizer: Any = None,
        kernel_constraint: Any = None,
        bias_constraint: Any = None,
        trainable: bool = True,
        name: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            trainable=trainable, name=name, activity_regularizer=activity_regularizer, **kwargs
        )
        rank = self._rank
        self.filters = int(filters)
        self.kernel_size = _tuple(kernel_size, rank, "kernel_size")
        self.strides = _tuple(strides, rank, "strides")
        self.dilation_rate = _tuple(dilation_rate, rank, "dilation_rate")
        self.padding = padding.upper()
        if self.padding not in ("VALID", "SAME"):
            raise ValueError(
                "padding must be 'valid' or 'same', but it is neither. Fix: pass "
                f"padding='valid' or padding='same'. Received: padding={padding!r}"
            )
        self.data_format = data_format
        self._format = _tf_format(data_format, rank)
        self.activation = resolve_activation(activation)
        self.use_bias = use_bias
        self.kernel_initializer = initializer(kernel_initializer)
        self.bias_initializer = initializer(bias_initializer)
        self.kernel_regularizer, self.bias_regularizer = kernel_regularizer, bias_regularizer
        self.kernel_constraint, self.bias_constraint = kernel_constraint, bias_constraint

    def _channels(self, input_shape: tf.TensorShape) -> int:
        shape = tf.TensorShape(input_shape)
        axis = -1 if self.data_format == "channels_last" else 1
        if shape.rank != self._rank + 2 or shape[axis] is None:
            raise ValueError(
                f"{type(self).__name__} expects inputs of rank {self._rank + 2} with a known "
                f"channel dimension, but they are not. Fix: reshape the inputs to "
                f"[batch, {'spatial, ' * self._rank}channels] (channels_last) with a static "
                f"channel count. Received: inputs.shape={shape}"
            )
        return int(shape[axis])

    def _kernel_shape(self, channels: int) -> list[int]:
        return [*self.kernel_size, channels, self.filters]

    def build(self, input_shape: tf.TensorShape) -> None:
        self._build_kernels(self._channels(input_shape))
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight(
                "bias",
                [self.filters],
                initializer=self.bias_initializer,
                regularizer=self.bias_regularizer,
                constraint=self.bias_constraint,
            )

    def _build_kernels(self, channels: int) -> None:
        self.kernel = self.add_weight(
            "kernel",
            self._kernel_shape(channels),
            initializer=self.kernel_initializer,
            regularizer=self.kernel_regularizer,
            constraint=self.kernel_constraint,
        )

    def _convolve(self, inputs: tf.Tensor) -> tf.Tensor:
        return tf.nn.convolution(
            inputs,
            self.kernel,
            strides=self.strides,
            padding=self.padding,
            dilations=self.dilation_rate,
            data_format=self._format,
        )

    def call(self, inputs: tf.Tensor) -> tf.Tensor:
        outputs = self._convolve(inputs)
        if self.bias is not None:
            fmt = "NHWC" if self.data_format == "channels_last" else "NCHW"
            if self._rank == 2 or self.data_format == "channels_last":
                outputs = tf.nn.bias_add(
                    outputs, self.bias, data_format=fmt if self._rank == 2 else None
                )
            else:
                shape = [1, self.filters] + [1] * self._rank
                outputs = outputs + tf.reshape(self.bias, shape)
        return self.activation(outputs) if self.activation is not None else outputs


class Conv1D(_Conv):
    _rank = 1


class Conv2D(_Conv):
    _rank = 2


class Conv3D(_Conv):
    _rank = 3


class Conv2DTranspose(_Conv):
    """Transposed 2-D convolution; kernel shape [kh, kw, filters, in_channels]."""

    _rank = 2
    _base_name = "conv2d_transpose"

    def __init__(
        self,
        filters: int,
        kernel_size: Any,
        strides: Any = (1, 1),
        padding: str = "valid",
        data_format: str = "channels_last",
        activation: Any = None,
        use_bias: bool = True,
        **kwargs: Any,
    ) -> None:
        # TF1's positional order: no dilation_rate between data_format and activation.
        super().__init__(
            filters,
            kernel_size,
            strides=strides,
            padding=padding,
            data_format=data_format,
            activation=activation,
            use_bias=use_bias,
            **kwargs,
        )

    def _kernel_shape(self, channels: int) -> list[int]:
        return [*self.kernel_size, self.filters, channels]

    def _convolve(self, inputs: tf.Tensor) -> tf.Tensor:
        shape = tf.shape(inputs)
        channels_last = self.data_format == "channels_last"
        h_axis, w_axis = (1, 2) if channels_last else (2, 3)

        def out_len(length: Any, k: int, s: int) -> Any:
            # works on dynamic (tensor) and static (int or None) lengths alike
            if length is None:
                return None
            return length * s + max(k - s, 0) if self.padding == "VALID" else length * s

        out_h = out_len(shape[h_axis], self.kernel_size[0], self.strides[0])
        out_w = out_len(shape[w_axis], self.kernel_size[1], self.strides[1])
        if channels_last:
            output_shape = tf.stack([shape[0], out_h, out_w, self.filters])
        else:
            output_shape = tf.stack([shape[0], self.filters, out_h, out_w])
        outputs = tf.nn.conv2d_transpose(
            inputs,
            self.kernel,
            output_shape,
            strides=self.strides,
            padding=self.padding,
            data_format=self._format,
            dilations=self.dilation_rate,
        )
        static = inputs.shape.as_list()
        hw = [
            out_len(static[h_axis], self.kernel_size[0], self.strides[0]),
            out_len(static[w_axis], self.kernel_size[1], self.strides[1]),
        ]
        full = [static[0], *hw, self.filters] if channels_last else [static[0], self.filters, *hw]
        outputs.set_shape(full)
        return outputs


class SeparableConv2D(_Conv):
    """Depthwise then pointwise 2-D convolution (`depthwise_kernel`, `pointwise_kernel`)."""

    _rank = 2
    _base_name = "separable_conv2d"

    def __init__(
        self,
        filters: int,
        kernel_size: Any,
        strides: Any = (1, 1),
        padding: str = "valid",
        data_format: str = "channels_last",
        dilation_rate: Any = (1, 1),
        depth_multiplier: int = 1,
        activation: Any = None,
        use_bias: bool = True,
        depthwise_initializer: Any = None,
        pointwise_initializer: Any = None,
        bias_initializer: Any = _ZEROS,
        depthwise_regularizer: Any = None,
        pointwise_regularizer: Any = None,
        bias_regularizer: Any = None,
        activity_regularizer: Any = None,
        depthwise_constraint: Any = None,
        pointwise_constraint: Any = None,
        bias_constraint: Any = None,
        **kwargs: Any,
    ) -> None:
        # TF1's positional order, which differs from the other convolutions.
        super().__init__(
            filters,
            kernel_size,
            strides=strides,
            padding=padding,
            data_format=data_format,
            dilation_rate=dilation_rate,
            activation=activation,
            use_bias=use_bias,
            bias_initializer=bias_initializer,
            bias_regularizer=bias_regularizer,
            activity_regularizer=activity_regularizer,
            bias_constraint=bias_constraint,
            **kwargs,
        )
        self.depth_multiplier = int(depth_multiplier)
        self.depthwise_initializer = initializer(depthwise_initializer)
        self.pointwise_initializer = initializer(pointwise_initializer)
        self.depthwise_regularizer = depthwise_regularizer
        self.pointwise_regularizer = pointwise_regularizer
        self.depthwise_constraint = depthwise_constraint
        self.pointwise_constraint = pointwise_constraint

    def _build_kernels(self, channels: int) -> None:
        self.depthwise_kernel = self.add_weight(
            "depthwise_kernel",
            [*self.kernel_size, channels, self.depth_multiplier],
            initializer=self.depthwise_initializer,
            regularizer=self.depthwise_regularizer,
            constraint=self.depthwise_constraint,
        )
        self.pointwise_kernel = self.add_weight(
            "pointwise_kernel",
            [1, 1, channels * self.depth_multiplier, self.filters],
            initializer=self.pointwise_initializer,
            regularizer=self.pointwise_regularizer,
            constraint=self.pointwise_constraint,
        )

    def _convolve(self, inputs: tf.Tensor) -> tf.Tensor:
        strides = (
            (1, *self.strides, 1) if self.data_format == "channels_last" else (1, 1, *self.strides)
        )
        return tf.nn.separable_conv2d(
            inputs,
            self.depthwise_kernel,
            self.pointwise_kernel,
            strides=strides,
            padding=self.padding,
            dilations=self.dilation_rate,
            data_format=self._format,
        )


def _functional(cls: type, doc: str) -> Any:
    def layer_fn(inputs: tf.Tensor, filters: int, kernel_size: Any, *args: Any, **kwargs: Any):
        name = kwargs.pop("name", None)
        reuse = kwargs.pop("reuse", None)
        layer = cls(filters, kernel_size, *args, name=name, _scope=name, _reuse=reuse, **kwargs)
        return layer(inputs)

    layer_fn.__doc__ = doc
    return layer_fn


conv1d = _functional(Conv1D, "Functional interface of `Conv1D` (`tf.compat.v1.layers.conv1d`).")
conv2d = _functional(Conv2D, "Functional interface of `Conv2D` (`tf.compat.v1.layers.conv2d`).")
conv3d = _functional(Conv3D, "Functional interface of `Conv3D` (`tf.compat.v1.layers.conv3d`).")
conv2d_transpose = _functional(
    Conv2DTranspose, "Functional interface of `Conv2DTranspose` (`tf.layers.conv2d_transpose`)."
)
separable_conv2d = _functional(
    SeparableConv2D, "Functional interface of `SeparableConv2D` (`tf.layers.separable_conv2d`)."
)
