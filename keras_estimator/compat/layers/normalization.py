"""tf.compat.v1.layers.batch_normalization with moving statistics in UPDATE_OPS."""

from __future__ import annotations

from typing import Any

import tensorflow as tf

from keras_estimator.compat.layers.base import Layer, initializer, smart_cond

_V1 = tf.compat.v1


class BatchNormalization(Layer):
    """Normalises with batch statistics when training, moving statistics otherwise.

    Variables `gamma`, `beta` (trainable), `moving_mean`, `moving_variance`; the moving
    averages' updates go to `tf.compat.v1.GraphKeys.UPDATE_OPS`, as in TF1.
    """

    def __init__(
        self,
        axis: int = -1,
        momentum: float = 0.99,
        epsilon: float = 1e-3,
        center: bool = True,
        scale: bool = True,
        beta_initializer: Any = _V1.zeros_initializer(),
        gamma_initializer: Any = _V1.ones_initializer(),
        moving_mean_initializer: Any = _V1.zeros_initializer(),
        moving_variance_initializer: Any = _V1.ones_initializer(),
        beta_regularizer: Any = None,
        gamma_regularizer: Any = None,
        beta_constraint: Any = None,
        gamma_constraint: Any = None,
        renorm: bool = False,
        renorm_clipping: Any = None,
        renorm_momentum: float = 0.99,
        fused: Any = None,
        trainable: bool = True,
        virtual_batch_size: Any = None,
        adjustment: Any = None,
        name: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(trainable=trainable, name=name, **kwargs)
        if renorm or virtual_batch_size is not None or adjustment is not None:
            raise NotImplementedError(
                "batch_normalization with renorm, virtual_batch_size or adjustment is not "
                "supported by keras_estimator's tf.compat.v1.layers; expected the defaults. "
                "Fix: drop those arguments (or use keras.layers.BatchNormalization). "
                f"Received: renorm={renorm!r}, virtual_batch_size={virtual_batch_size!r}, "
                f"adjustment={adjustment!r}"
            )
        self.axis = axis if isinstance(axis, int) else list(axis)
        self.fused = fused
        self.momentum, self.epsilon = momentum, epsilon
        self.center, self.scale = center, scale
        self.beta_initializer = initializer(beta_initializer)
        self.gamma_initializer = initializer(gamma_initializer)
        self.moving_mean_initializer = initializer(moving_mean_initializer)
        self.moving_variance_initializer = initializer(moving_variance_initializer)
        self.beta_regularizer, self.gamma_regularizer = beta_regularizer, gamma_regularizer
        self.beta_constraint, self.gamma_constraint = beta_constraint, gamma_constraint

    def build(self, input_shape: tf.TensorShape) -> None:
        shape = tf.TensorShape(input_shape)
        rank = shape.rank
        axes = [self.axis] if isinstance(self.axis, int) else self.axis
        self._axes = sorted(a % rank for a in axes)
        param_shape = [int(shape[a]) for a in self._axes]
        self._broadcast = [1] * rank
        for a in self._axes:
            self._broadcast[a] = int(shape[a])
        self._reduce = [a for a in range(rank) if a not in self._axes]
        # tf.compat.v1 (2.15) used the fused kernel for 4-D/5-D float32/16 inputs normalised
        # over channels (unless fused=False; TF 1.15: 4-D only); it moves `moving_variance`
        # towards the unbiased variance.
        self._unbiased_update = (
            self.fused is not False
            and rank in (4, 5)
            and self._axes in ([1], [rank - 1])
            and (self.dtype or tf.float32) in (tf.float32, tf.float16, tf.bfloat16)
        )
        dtype = self.dtype if self.dtype in (tf.float32, tf.float64) else tf.float32
        self.gamma = (
            self.add_weight(
                "gamma",
                param_shape,
                dtype=dtype,
                initializer=self.gamma_initializer,
                regularizer=self.gamma_regularizer,
                constraint=self.gamma_constraint,
            )
            if self.scale
            else None
        )
        self.beta = (
            self.add_weight(
                "beta",
                param_shape,
                dtype=dtype,
                initializer=self.beta_initializer,
                regularizer=self.beta_regularizer,
                constraint=self.beta_constraint,
            )
            if self.center
            else None
        )
        self.moving_mean = self.add_weight(
            "moving_mean",
            param_shape,
            dtype=dtype,
            initializer=self.moving_mean_initializer,
            trainable=False,
        )
        self.moving_variance = self.add_weight(
            "moving_variance",
            param_shape,
            dtype=dtype,
            initializer=self.moving_variance_initializer,
            trainable=False,
        )

    def _shaped(self, t: Any) -> Any:
        return None if t is None else tf.reshape(t, self._broadcast)

    def call(self, inputs: tf.Tensor, training: Any = False) -> tf.Tensor:
        static = training if isinstance(training, bool) else tf.get_static_value(training)
        moving_mean = tf.convert_to_tensor(self.moving_mean)
        moving_var = tf.convert_to_tensor(self.moving_variance)
        if static is not None and not bool(static):
            mean, variance = moving_mean, moving_var
        else:
            batch_mean, batch_var = tf.nn.moments(tf.cast(inputs, moving_mean.dtype), self._reduce)
            mean = smart_cond(training, lambda: batch_mean, lambda: moving_mean)
            variance = smart_cond(training, lambda: batch_var, lambda: moving_var)
            update_var = variance
            if self._unbiased_update:
                shape = tf.shape(inputs)
                count = tf.cast(tf.reduce_prod(tf.gather(shape, self._reduce)), variance.dtype)
                unbiased = batch_var * count / tf.maximum(count - 1.0, 1.0)
                update_var = smart_cond(training, lambda: unbiased, lambda: moving_var)
            decay = 1.0 - self.momentum
            for variable, old, new in (
                (self.moving_mean, moving_mean, mean),
                (self.moving_variance, moving_var, update_var),
            ):
                update = variable.assign_sub((old - new) * decay, read_value=False)
                _V1.add_to_collection(_V1.GraphKeys.UPDATE_OPS, update)
        outputs = tf.nn.batch_normalization(
            tf.cast(inputs, mean.dtype),
            self._shaped(mean),
            self._shaped(variance),
            self._shaped(self.beta),
            self._shaped(self.gamma),
            self.epsilon,
        )
        return tf.cast(outputs, inputs.dtype)


def batch_normalization(
    inputs: tf.Tensor,
    axis: int = -1,
    momentum: float = 0.99,
    epsilon: float = 1e-3,
    center: bool = True,
    scale: bool = True,
    beta_initializer: Any = _V1.zeros_initializer(),
    gamma_initializer: Any = _V1.ones_initializer(),
    moving_mean_initializer: Any = _V1.zeros_initializer(),
    moving_variance_initializer: Any = _V1.ones_initializer(),
    beta_regularizer: Any = None,
    gamma_regularizer: Any = None,
    beta_constraint: Any = None,
    gamma_constraint: Any = None,
    training: Any = False,
    trainable: bool = True,
    name: str | None = None,
    reuse: Any = None,
    renorm: bool = False,
    renorm_clipping: Any = None,
    renorm_momentum: float = 0.99,
    fused: Any = None,
    virtual_batch_size: Any = None,
    adjustment: Any = None,
) -> tf.Tensor:
    """Functional interface of `BatchNormalization`; add UPDATE_OPS to the train_op."""
    layer = BatchNormalization(
        axis=axis,
        momentum=momentum,
        epsilon=epsilon,
        center=center,
        scale=scale,
        beta_initializer=beta_initializer,
        gamma_initializer=gamma_initializer,
        moving_mean_initializer=moving_mean_initializer,
        moving_variance_initializer=moving_variance_initializer,
        beta_regularizer=beta_regularizer,
        gamma_regularizer=gamma_regularizer,
        beta_constraint=beta_constraint,
        gamma_constraint=gamma_constraint,
        renorm=renorm,
        trainable=trainable,
        fused=fused,
        virtual_batch_size=virtual_batch_size,
        adjustment=adjustment,
        name=name,
        _scope=name,
        _reuse=reuse,
    )
    return layer(inputs, training=training)
