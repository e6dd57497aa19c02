"""How contrib layers create variables and publish outputs (model variables, collections)."""

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


__all__ = ["collect_named_outputs", "model_variable", "variable_collections"]
