"""How contrib layers create variables (model variables, biases) and publish outputs
(normalizer, activation, collections)."""

from __future__ import annotations

from typing import Any

import tensorflow as tf

_V1 = tf.compat.v1


def variable_collections(variables_collections: Any, name: str) -> list[str]:
    """contrib's `variables_collections`: a list for every variable, or a dict by name."""
    if isinstance(variables_collections, dict):
        variables_collections = variables_collections.get(name)
    return list(variables_collections or [])


def model_variable(
    name: str,
    shape: Any,
    dtype: tf.DType,
    initializer: Any,
    regularizer: Any = None,
    trainable: bool = True,
    collections: list[str] | None = None,
) -> tf.Variable:
    """`tf.compat.v1.get_variable` in the current scope, also in `MODEL_VARIABLES`."""
    keys = _V1.GraphKeys
    every = [keys.GLOBAL_VARIABLES, keys.MODEL_VARIABLES, *(collections or [])]
    return _V1.get_variable(name, shape=shape, dtype=dtype, initializer=initializer,
                            regularizer=regularizer, trainable=trainable,
                            collections=list(dict.fromkeys(every)))  # fmt: skip


def collect_named_outputs(collections: Any, alias: str, outputs: tf.Tensor) -> tf.Tensor:
    """Adds `outputs` to `collections` (contrib's `outputs_collections`); returns it."""
    for collection in collections or []:
        _V1.add_to_collection(collection, outputs)
    return outputs


def add_biases(
    outputs: tf.Tensor,
    num_outputs: int,
    dtype: tf.DType,
    normalizer_fn: Any,
    biases_initializer: Any,
    biases_regularizer: Any,
    trainable: bool,
    variables_collections: Any,
    data_format: str | None = None,
) -> tf.Tensor:
    """contrib's `biases` `[num_outputs]` added to `outputs`, unless a `normalizer_fn` is
    given or `biases_initializer` is None."""
    if normalizer_fn or not biases_initializer:
        return outputs
    biases = model_variable("biases", [num_outputs], dtype, biases_initializer,
                            biases_regularizer, trainable,
                            variable_collections(variables_collections, "biases"))  # fmt: skip
    return tf.nn.bias_add(outputs, biases, data_format=data_format)


def finish_layer(
    outputs: tf.Tensor,
    normalizer_fn: Any,
    normalizer_params: dict | None,
    activation_fn: Any,
    outputs_collections: Any,
    alias: str,
) -> tf.Tensor:
    """`activation_fn(normalizer_fn(outputs))` (each when given), added to
    `outputs_collections`: how every contrib layer ends."""
    if normalizer_fn is not None:
        outputs = normalizer_fn(outputs, **(normalizer_params or {}))
    if activation_fn is not None:
        outputs = activation_fn(outputs)
    return collect_named_outputs(outputs_collections, alias, outputs)


__all__ = [
    "add_biases",
    "collect_named_outputs",
    "finish_layer",
    "model_variable",
    "variable_collections",
]
