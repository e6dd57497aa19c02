"""tf.compat.v1.layers core layers: Dense, Dropout, Flatten."""

from __future__ import annotations

from typing import Any

import tensorflow as tf

from keras_estimator.compat.layers.base import Layer, initializer, resolve_activation, smart_cond


class Dense(Layer):
    """`outputs = activation(inputs @ kernel + bias)`, with `dense/kernel`, `dense/bias`."""

    def __init__(
        self,
        units: int,
        activation: Any = None,
        use_bias: bool = True,
        kernel_initializer: Any = None,
        bias_initializer: Any = tf.compat.v1.zeros_initializer(),
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
        self.units = int(units)
        self.activation = resolve_activation(activation)
        self.use_bias = use_bias
        self.kernel_initializer = initializer(kernel_initializer)
        self.bias_initializer = initializer(bias_initializer)
        self.kernel_regularizer, self.bias_regularizer = kernel_regularizer, bias_regularizer
        self.kernel_constraint, self.bias_constraint = kernel_constraint, bias_constraint

    def build(self, input_shape: tf.TensorShape) -> None:
        last = tf.TensorShape(input_shape)[-1]
        if last is None:
            raise ValueError(
                "The last dimension of the inputs to `Dense` should be defined. Found `None`. "
                "Fix: give the input a static last dimension, e.g. tf.reshape(x, [-1, n]) or "
                f"x.set_shape([None, n]). Received: inputs.shape={tf.TensorShape(input_shape)}"
            )
        self.kernel = self.add_weight(
            "kernel",
            [int(last), self.units],
            initializer=self.kernel_initializer,
            regularizer=self.kernel_regularizer,
            constraint=self.kernel_constraint,
        )
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight(
                "bias",
                [self.units],
                initializer=self.bias_initializer,
                regularizer=self.bias_regularizer,
                constraint=self.bias_constraint,
            )

    def call(self, inputs: tf.Tensor) -> tf.Tensor:
        rank = inputs.shape.rank
        if rank is not None and rank > 2:
            outputs = tf.tensordot(inputs, self.kernel, [[rank - 1], [0]])
        else:
            outputs = tf.matmul(inputs, self.kernel)
        if self.bias is not None:
            outputs = tf.nn.bias_add(outputs, self.bias)
        return self.activation(outputs) if self.activation is not None else outputs


class Dropout(Layer):
    """Drops `rate` of the inputs when `training` is true (a bool or a boolean tensor)."""

    def __init__(
        self,
        rate: float = 0.5,
        noise_shape: Any = None,
        seed: int | None = None,
        name: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(name=name, **kwargs)
        self.rate, self.noise_shape, self.seed = rate, noise_shape, seed

    def call(self, inputs: tf.Tensor, training: Any = False) -> tf.Tensor:
        if isinstance(self.rate, (int, float)) and self.rate == 0:
            return tf.identity(inputs)
        return smart_cond(
            training,
            lambda: tf.nn.dropout(
                inputs, rate=self.rate, noise_shape=self.noise_shape, seed=self.seed
            ),
            lambda: tf.identity(inputs),
        )


class Flatten(Layer):
    """Flattens all but the batch dimension."""

    def __init__(self, data_format: str | None = None, name: str | None = None, **kwargs: Any):
        super().__init__(name=name, **kwargs)
        self.data_format = data_format

    def call(self, inputs: tf.Tensor) -> tf.Tensor:
        if self.data_format == "channels_first" and inputs.shape.rank and inputs.shape.rank > 2:
            perm = [0] + list(range(2, inputs.shape.rank)) + [1]
            inputs = tf.transpose(inputs, perm)
        tail = inputs.shape[1:]
        width = tail.num_elements() if tail.is_fully_defined() else -1
        return tf.reshape(inputs, [tf.shape(inputs)[0], width])


def dense(
    inputs: tf.Tensor,
    units: int,
    activation: Any = None,
    use_bias: bool = True,
    kernel_initializer: Any = None,
    bias_initializer: Any = tf.compat.v1.zeros_initializer(),
    kernel_regularizer: Any = None,
    bias_regularizer: Any = None,
    activity_regularizer: Any = None,
    kernel_constraint: Any = None,
    bias_constraint: Any = None,
    trainable: bool = True,
    name: str | None = None,
    reuse: Any = None,
) -> tf.Tensor:
    """Functional interface of `Dense` (`tf.compat.v1.layers.dense`)."""
    layer = Dense(
        units,
        activation=activation,
        use_bias=use_bias,
        kernel_initializer=kernel_initializer,
        bias_initializer=bias_initializer,
        kernel_regularizer=kernel_regularizer,
        bias_regularizer=bias_regularizer,
        activity_regularizer=activity_regularizer,
        kernel_constraint=kernel_constraint,
        bias_constraint=bias_constraint,
        trainable=trainable,
        name=name,
        _scope=name,
        _reuse=reuse,
    )
    return layer(inputs)


def dropout(
    inputs: tf.Tensor,
    rate: float = 0.5,
    noise_shape: Any = None,
    seed: int | None = None,
    training: Any = False,
    name: str | None = None,
) -> tf.Tensor:
    """Functional interface of `Dropout`; identity unless `training`."""
    return Dropout(rate, noise_shape=noise_shape, seed=seed, name=name)(inputs, training=training)


def flatten(inputs: tf.Tensor, name: str | None = None, data_format: str = "channels_last"):
    """Functional interface of `Flatten`."""
    return Flatten(data_format=data_format, name=name)(inputs)
