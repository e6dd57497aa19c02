"""`tf.contrib.layers` dense layers: fully_connected, flatten, dropout, embed_sequence.

Variables keep contrib's names (`fully_connected/weights`, `fully_connected/biases`,
`EmbedSequence/embeddings`), so TF1 checkpoints restore.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import Any

import numpy as np
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


def smart_cond(pred: Any, true_fn: Callable, false_fn: Callable) -> Any:
    """`true_fn()` / `false_fn()` for a Python or constant predicate, else `tf.cond`."""
    value = tf.get_static_value(pred) if isinstance(pred, (tf.Tensor, tf.Variable)) else pred
    if value is None:
        return tf.cond(pred, true_fn, false_fn)
    return true_fn() if bool(value) else false_fn()


def dense_weights(
    inputs: tf.Tensor,
    num_outputs: int,
    normalizer_fn: Callable | None,
    weights_initializer: Any,
    weights_regularizer: Any,
    biases_initializer: Any,
    biases_regularizer: Any,
    variables_collections: Any,
    trainable: bool,
) -> tf.Tensor:
    """`inputs @ weights (+ biases)` over the last axis, in the current variable scope."""
    dtype = inputs.dtype.base_dtype
    in_dim = inputs.shape[-1]
    if in_dim is None:
        raise ValueError(
            "The last dimension of the inputs to fully_connected must be known. Fix: set "
            f"it (set_shape / reshape). Received: inputs.shape={inputs.shape}"
        )
    weights = model_variable("weights", [int(in_dim), num_outputs], dtype, weights_initializer,
                             weights_regularizer, trainable,
                             variable_collections(variables_collections, "weights"))  # fmt: skip
    if inputs.shape.rank == 2:
        outputs = tf.matmul(inputs, weights)
    else:
        outputs = tf.tensordot(inputs, weights, [[inputs.shape.rank - 1], [0]])
        outputs.set_shape(inputs.shape[:-1].concatenate([num_outputs]))
    return add_biases(outputs, num_outputs, dtype, normalizer_fn, biases_initializer,
                      biases_regularizer, trainable, variables_collections)  # fmt: skip


@arg_scoped
def fully_connected(
    inputs: Any,
    num_outputs: int,
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
) -> tf.Tensor:
    """`activation_fn(normalizer_fn(inputs @ weights + biases))`, contrib's dense layer.

    `biases_initializer=None` or a `normalizer_fn` means no biases.

    Example:
        >>> hidden = fully_connected(features, 64, scope="hidden")   # hidden/weights, biases
    """
    if not isinstance(num_outputs, numbers.Integral) or isinstance(num_outputs, bool):
        raise ValueError(
            "num_outputs must be an integer. Fix: pass the number of output units. "
            f"Received: num_outputs={num_outputs!r}"
        )
    with _V1.variable_scope(scope, "fully_connected", [inputs], reuse=reuse) as sc:
        inputs = tf.convert_to_tensor(inputs)
        outputs = dense_weights(inputs, int(num_outputs), normalizer_fn, weights_initializer,
                                weights_regularizer, biases_initializer, biases_regularizer,
                                variables_collections, trainable)  # fmt: skip
        return finish_layer(outputs, normalizer_fn, normalizer_params, activation_fn,
                            outputs_collections, sc.name)  # fmt: skip


@arg_scoped
def flatten(inputs: Any, outputs_collections: Any = None, scope: str | None = None) -> tf.Tensor:
    """Reshapes `[batch, d1, d2, ...]` to `[batch, d1 * d2 * ...]`.

    Example:
        >>> flat = flatten(images)   # [32, 28, 28, 1] -> [32, 784]
    """
    with tf.name_scope(scope or "Flatten") as sc:
        inputs = tf.convert_to_tensor(inputs)
        if inputs.shape.rank is None or inputs.shape.rank < 2:
            raise ValueError(
                "Inputs to flatten must have rank >= 2. Fix: pass a batch of examples. "
                f"Received: inputs.shape={inputs.shape}"
            )
        rest = inputs.shape[1:]
        size = int(np.prod(rest.as_list())) if rest.is_fully_defined() else -1
        outputs = tf.reshape(inputs, [tf.shape(inputs)[0], size])
        outputs.set_shape([inputs.shape[0], size if size >= 0 else None])
        return collect_named_outputs(outputs_collections, sc.rstrip("/"), outputs)


@arg_scoped
def dropout(
    inputs: Any,
    keep_prob: float = 0.5,
    noise_shape: Any = None,
    is_training: Any = True,
    outputs_collections: Any = None,
    scope: str | None = None,
    seed: int | None = None,
) -> tf.Tensor:
    """Keeps each value with probability `keep_prob` (scaled by 1 / keep_prob) when training.

    Example:
        >>> net = dropout(net, keep_prob=0.9, is_training=mode == tf.estimator.ModeKeys.TRAIN)
    """
    with _V1.variable_scope(scope, "Dropout", [inputs]) as sc:
        inputs = tf.convert_to_tensor(inputs)
        rate = 1.0 - keep_prob

        def dropped() -> tf.Tensor:
            return tf.nn.dropout(inputs, rate=rate, noise_shape=noise_shape, seed=seed)

        outputs = smart_cond(is_training, dropped, lambda: tf.identity(inputs))
        return collect_named_outputs(outputs_collections, sc.name, outputs)


def embed_sequence(
    ids: Any,
    vocab_size: int | None = None,
    embed_dim: int | None = None,
    unique: bool = False,
    initializer: Any = None,
    regularizer: Any = None,
    trainable: bool = True,
    scope: str | None = None,
    reuse: Any = None,
) -> tf.Tensor:
    """Looks `ids` `[batch, length]` up in `EmbedSequence/embeddings` `[vocab_size, embed_dim]`.

    Example:
        >>> embedded = embed_sequence(features["words"], vocab_size=10000, embed_dim=50)
    """
    if not (vocab_size and embed_dim):
        raise ValueError(
            "embed_sequence needs vocab_size and embed_dim. Fix: pass both. Received: "
            f"vocab_size={vocab_size!r}, embed_dim={embed_dim!r}"
        )
    with _V1.variable_scope(scope, "EmbedSequence", [ids], reuse=reuse):
        embeddings = model_variable("embeddings", [vocab_size, embed_dim], tf.float32,
                                    initializer, regularizer, trainable)  # fmt: skip
        if unique:
            flat, index = tf.unique(tf.reshape(ids, [-1]))
            looked_up = tf.gather(tf.nn.embedding_lookup(embeddings, flat), index)
            return tf.reshape(looked_up, tf.concat([tf.shape(ids), [embed_dim]], 0))
        return tf.nn.embedding_lookup(embeddings, ids)


__all__ = ["dropout", "embed_sequence", "flatten", "fully_connected"]
