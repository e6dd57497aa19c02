"""`tf.contrib.layers` normalization: `batch_norm` and `layer_norm`, with TF1's variable names
(`BatchNorm/beta`, `gamma`, `moving_mean`, `moving_variance`; `LayerNorm/beta`, `gamma`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tensorflow as tf

from keras_estimator.dropin.contrib.arg_scope import arg_scoped
from keras_estimator.dropin.contrib.layers.core import smart_cond
from keras_estimator.dropin.contrib.layers.variables import (
    finish_layer,
    model_variable,
    variable_collections,
)

_V1 = tf.compat.v1


@arg_scoped
def layer_norm(
    inputs: tf.Tensor,
    center: bool = True,
    scale: bool = True,
    activation_fn: Callable | None = None,
    reuse: Any = None,
    variables_collections: Any = None,
    outputs_collections: Any = None,
    trainable: bool = True,
    begin_norm_axis: int = 1,
    begin_params_axis: int = -1,
    scope: str | None = None,
) -> tf.Tensor:
    """Normalizes over axes `begin_norm_axis..` with per-channel beta / gamma (epsilon 1e-12).

    Variables are `<scope or LayerNorm>/beta` and `/gamma` of shape
    `inputs.shape[begin_params_axis:]`, as BERT checkpoints name them.

    Example:
        >>> output = layer_norm(input_tensor, begin_norm_axis=-1, begin_params_axis=-1)
    """
    inputs = tf.convert_to_tensor(inputs)
    rank = inputs.shape.rank
    if rank is None:
        raise ValueError(
            f"Inputs {inputs.name} has undefined rank. Expected a tensor of known rank. Fix: "
            "set its shape, e.g. inputs.set_shape([None, n]). "
            f"Received: inputs.shape={inputs.shape}"
        )
    norm_axis = begin_norm_axis % rank if begin_norm_axis < 0 else begin_norm_axis
    params_axis = begin_params_axis % rank if begin_params_axis < 0 else begin_params_axis
    if norm_axis >= rank or params_axis >= rank:
        raise ValueError(
            f"begin_norm_axis ({begin_norm_axis}) and begin_params_axis ({begin_params_axis}) "
            f"must be < rank(inputs) ({rank}). Fix: pass axes in [-{rank}, {rank}). "
            f"Received: begin_norm_axis={begin_norm_axis}, begin_params_axis={begin_params_axis}"
        )
    params_shape = inputs.shape[params_axis:]
    if not params_shape.is_fully_defined():
        raise ValueError(
            f"Inputs {inputs.name}: shape(inputs)[{begin_params_axis}:] is not fully defined: "
            f"{params_shape}. Fix: give those dimensions a static size (set_shape / reshape). "
            f"Received: inputs.shape={inputs.shape}"
        )
    dtype = inputs.dtype.base_dtype
    with _V1.variable_scope(scope, "LayerNorm", [inputs], reuse=reuse) as sc:
        collections = list(variables_collections or []) or None
        beta = gamma = None
        if center:
            beta = _V1.get_variable("beta", shape=params_shape, dtype=dtype,
                                    initializer=_V1.zeros_initializer(), trainable=trainable,
                                    collections=_with_globals(collections))  # fmt: skip
        if scale:
            gamma = _V1.get_variable("gamma", shape=params_shape, dtype=dtype,
                                     initializer=_V1.ones_initializer(), trainable=trainable,
                                     collections=_with_globals(collections))  # fmt: skip
        mean, variance = tf.nn.moments(inputs, list(range(norm_axis, rank)), keepdims=True)
        outputs = tf.nn.batch_normalization(
            inputs, mean, variance, offset=beta, scale=gamma, variance_epsilon=1e-12
        )
        return finish_layer(outputs, None, None, activation_fn, outputs_collections, sc.name)


def _with_globals(collections: list | None) -> list | None:
    if collections is None:
        return None
    return list({*collections, _V1.GraphKeys.GLOBAL_VARIABLES})


@arg_scoped
def batch_norm(
    inputs: Any,
    decay: float = 0.999,
    center: bool = True,
    scale: bool = False,
    epsilon: float = 0.001,
    activation_fn: Callable | None = None,
    param_initializers: dict | None = None,
    param_regularizers: dict | None = None,
    updates_collections: Any = _V1.GraphKeys.UPDATE_OPS,
    is_training: Any = True,
    reuse: Any = None,
    variables_collections: Any = None,
    outputs_collections: Any = None,
    trainable: bool = True,
    batch_weights: Any = None,
    fused: bool | None = None,
    data_format: str = "NHWC",
    zero_debias_moving_mean: bool = False,
    scope: str | None = None,
    renorm: bool = False,
    renorm_clipping: Any = None,
    renorm_decay: float = 0.99,
    adjustment: Any = None,
) -> tf.Tensor:
    """Batch normalization over every axis but the channels (last, or 1 for NC* formats).

    Training normalizes with the batch's moments and moves `moving_mean` /
    `moving_variance` by `decay`; the update ops go to `updates_collections` (run them with
    the train_op, e.g. `tf.control_dependencies(tf.compat.v1.get_collection(UPDATE_OPS))`),
    or run before the output when it is None. As in TF1, the fused kernel (rank 2 or 4,
    `fused` not False) moves the variance towards the unbiased batch variance.

    Example:
        >>> net = batch_norm(net, is_training=mode == tf.estimator.ModeKeys.TRAIN, scale=True)
    """
    unsupported = {"batch_weights": batch_weights, "renorm": renorm or None,
                   "adjustment": adjustment, "zero_debias_moving_mean":
                   zero_debias_moving_mean or None}  # fmt: skip
    given = {k: v for k, v in unsupported.items() if v is not None}
    if given:
        raise NotImplementedError(
            f"tf.contrib.layers.batch_norm: {sorted(given)} are not supported by "
            "keras_estimator. Fix: leave them at their defaults, or use "
            "tf.compat.v1.layers.batch_normalization. Received: "
            + ", ".join(f"{k}={v!r}" for k, v in sorted(given.items()))
        )
    del renorm_clipping, renorm_decay
    param_initializers = param_initializers or {}
    param_regularizers = param_regularizers or {}
    with _V1.variable_scope(scope, "BatchNorm", [inputs], reuse=reuse) as sc:
        inputs = tf.convert_to_tensor(inputs)
        rank = inputs.shape.rank
        if rank is None:
            raise ValueError(
                f"Inputs {inputs.name} has undefined rank. Fix: set its shape. "
                f"Received: inputs.shape={inputs.shape}"
            )
        axis = 1 if data_format.startswith("NC") and rank > 2 else rank - 1
        channels = inputs.shape[axis]
        if channels is None:
            raise ValueError(
                f"Inputs {inputs.name} has an undefined channel dimension. Fix: set it. "
                f"Received: inputs.shape={inputs.shape}"
            )
        dtype = inputs.dtype.base_dtype
        shape = [int(channels)]

        def param(name: str, init: Any, train: bool, regularize: bool = True) -> tf.Variable:
            return model_variable(
                name,
                shape,
                dtype,
                param_initializers.get(name, init),
                param_regularizers.get(name) if regularize else None,
                train,
                variable_collections(variables_collections, name),
            )

        beta = param("beta", _V1.zeros_initializer(), trainable) if center else None
        gamma = param("gamma", _V1.ones_initializer(), trainable) if scale else None
        moving_mean = param("moving_mean", _V1.zeros_initializer(), False, False)
        moving_variance = param("moving_variance", _V1.ones_initializer(), False, False)
        reduce_axes = [a for a in range(rank) if a != axis]
        broadcast = [1] * rank
        broadcast[axis] = shape[0]

        def shaped(t: Any) -> Any:
            return None if t is None else tf.reshape(t, broadcast)

        static = is_training if isinstance(is_training, bool) else None
        if static is None and isinstance(is_training, (tf.Tensor, tf.Variable)):
            static = tf.get_static_value(is_training)
        read_mean, read_var = tf.identity(moving_mean), tf.identity(moving_variance)
        if static is not None and not bool(static):
            mean, variance = read_mean, read_var
        else:
            batch_mean, batch_var = tf.nn.moments(inputs, reduce_axes)
            update_var = batch_var
            if fused is not False and rank in (2, 4):
                count = tf.cast(tf.size(inputs) // shape[0], dtype)
                update_var = batch_var * count / tf.maximum(count - 1.0, 1.0)
            mean = smart_cond(is_training, lambda: batch_mean, lambda: read_mean)
            variance = smart_cond(is_training, lambda: batch_var, lambda: read_var)
            updates = []
            for variable, old, new in ((moving_mean, read_mean, batch_mean),
                                       (moving_variance, read_var, update_var)):  # fmt: skip
                step = smart_cond(is_training, lambda o=old, n=new: (o - n) * (1.0 - decay),
                                  lambda o=old: tf.zeros_like(o))  # fmt: skip
                updates.append(variable.assign_sub(step, read_value=False))
            if updates_collections is None:
                with tf.control_dependencies(updates):
                    mean, variance = tf.identity(mean), tf.identity(variance)
            else:
                collections = (
                    [updates_collections] if isinstance(updates_collections, str)
                    else list(updates_collections)
                )  # fmt: skip
                for update in updates:
                    for collection in collections:
                        _V1.add_to_collection(collection, update)
        outputs = tf.nn.batch_normalization(inputs, shaped(mean), shaped(variance),
                                            shaped(beta), shaped(gamma), epsilon)  # fmt: skip
        return finish_layer(outputs, None, None, activation_fn, outputs_collections, sc.name)


__all__ = ["batch_norm", "layer_norm"]
