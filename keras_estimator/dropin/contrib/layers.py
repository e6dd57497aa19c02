"""`tf.contrib.layers.layer_norm` with TF1's variable names (`LayerNorm/beta`, `gamma`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tensorflow as tf

_V1 = tf.compat.v1


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
    with _V1.variable_scope(scope, "LayerNorm", [inputs], reuse=reuse):
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
        if activation_fn is not None:
            outputs = activation_fn(outputs)
        for collection in outputs_collections or []:
            _V1.add_to_collection(collection, outputs)
        return outputs


def _with_globals(collections: list | None) -> list | None:
    if collections is None:
        return None
    return list({*collections, _V1.GraphKeys.GLOBAL_VARIABLES})


__all__ = ["layer_norm"]
