"""SequentialHeadWrapper: a head over per-step logits, each valid time step an example.

As tf.estimator 2.15's (`head/sequential_head.py`): in TRAIN and EVAL the logits
[batch, time, d], the labels [batch, time] (dense, padded, or a SparseTensor) and the named
features (typically the weights) are flattened to the steps the sequence mask marks valid,
[steps, d] / [steps, 1], before the wrapped head computes its loss and metrics. In PREDICT the
wrapped head's predictions keep [batch, time, ...] and the mask joins them under its key.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tensorflow as tf

from keras_estimator.canned.heads import base_head as base
from keras_estimator.canned.heads.multi_head import MultiHead
from keras_estimator.spec.estimator_spec import EstimatorSpec
from keras_estimator.spec.mode_keys import ModeKeys


def flatten_steps(tensor: Any, sequence_mask: tf.Tensor, expected_length: tf.Tensor,
                  name: str) -> tf.Tensor:  # fmt: skip
    """[steps, D...] from [batch, time, D...]: a dense tensor's values where the mask is true,
    a SparseTensor's values in index order; [steps, 1] from [batch, time]."""
    if isinstance(tensor, tf.SparseTensor):
        shape = tensor.shape
        flat = tf.sparse.reorder(tensor).values
        if shape.rank is not None and shape.rank > 2:
            flat = tf.reshape(flat, [-1, *shape[2:]])
    else:
        tensor = tf.convert_to_tensor(tensor)
        shape = tensor.shape
        if shape.rank is not None and shape.rank >= 2:
            flat = tf.boolean_mask(tensor, sequence_mask)
    if shape.rank is None or shape.rank < 2:
        raise ValueError(
            f"{name} must have at least 2 dimensions, [batch, time, ...], with a sequential "
            f"head. Received: {name} of shape {shape} (rank {shape.rank}). Fix: give one "
            "value per time step, e.g. padded labels of shape [batch, time]."
        )
    if shape.rank == 2:
        flat = flat[:, tf.newaxis]
    check = tf.debugging.assert_equal(
        tf.shape(flat)[0], expected_length,
        message=f"Tensor shape is incompatible with provided mask: {name} has a different "
        "number of valid steps than the sequence mask.",
    )  # fmt: skip
    with tf.control_dependencies([check]):
        return tf.identity(flat)


class SequentialHeadWrapper:
    """A sequential head wrapping a `Head`: loss and metrics over the valid steps only.

    Args:
        static_head: the head to wrap (`BinaryClassHead`, `MultiClassHead`, ...; not a
            `MultiHead`).
        sequence_length_mask: the key of the [batch, time] boolean mask in the features
            (`RNNEstimator` adds it, from the sequence lengths, when the features lack it).
        feature_columns: a feature key (or a list of keys) to flatten along with the labels
            and pass to the wrapped head, typically its weight column.

    Example:
        >>> head = SequentialHeadWrapper(BinaryClassHead(weight_column="w"),
        ...                              sequence_length_mask="mask", feature_columns="w")
        >>> est = RNNEstimator(head, sequence_feature_columns=columns, units=[8],
        ...                    return_sequences=True)
    """

    def __init__(self, static_head: Any, sequence_length_mask: str = "sequence_length_mask",
                 feature_columns: str | list[str] | None = None) -> None:  # fmt: skip
        if not isinstance(sequence_length_mask, str):
            raise TypeError(
                "`sequence_mask` column must be a string. Given type: "
                f"{type(sequence_length_mask)}. Received: sequence_length_mask="
                f"{sequence_length_mask!r}"
            )
        columns = feature_columns or []
        columns = [columns] if isinstance(columns, str) else columns
        if not isinstance(columns, list | tuple) or not all(isinstance(c, str) for c in columns):
            raise TypeError(
                "Column must a string: the features a sequential head flattens are named by "
                "their keys (a numeric_column weight is not supported; give its key). "
                f"Received: feature_columns={feature_columns!r}"
            )
        if isinstance(static_head, MultiHead):
            raise ValueError("`MultiHead` is not supported with `SequentialHeadWrapper`.")
        self._static_head = static_head
        self._mask_key = sequence_length_mask
        self._columns = list(columns)

    input_sequence_mask_key = property(lambda self: self._mask_key)
    static_head = property(lambda self: self._static_head)
    logits_dimension = property(lambda self: self._static_head.logits_dimension)
    loss_reduction = property(lambda self: self._static_head.loss_reduction)

    @property
    def name(self) -> str | None:
        static = self._static_head.name
        return f"{static}_sequential" if static else None

    def _flatten(self, labels: Any, logits: Any, features: dict) -> tuple:
        if not isinstance(features, dict) or self._mask_key not in features:
            found = list(features) if isinstance(features, dict) else type(features)
            raise ValueError(
                f"The provided sequence_length_mask key `{self._mask_key}` should be included "
                f"in the features dictionary, but was not found. Found keys: {found}."
            )
        mask = tf.convert_to_tensor(features[self._mask_key])
        if mask.shape.rank != 2:
            raise ValueError(
                f"Mask is expected to have two dimensions, got {mask.shape.rank} instead. "
                f"Received: features[{self._mask_key!r}] of shape {mask.shape}"
            )
        mask = tf.cast(mask, tf.bool)
        with tf.name_scope("flatten"):
            length = tf.reduce_sum(tf.cast(mask, tf.int32))
            flat_logits = flatten_steps(logits, mask, length, "logits")
            flat_labels = flatten_steps(labels, mask, length, "labels")
            flat_features = {}
            for column in self._columns:
                if column not in features:
                    raise ValueError(
                        f"`{column}` column expected in features dictionary. Found keys: "
                        f"{list(features)}."
                    )
                flat_features[column] = flatten_steps(features[column], mask, length, column)
        return flat_labels, flat_logits, flat_features

    def loss(
        self,
        labels: Any,
        logits: Any,
        features: dict | None = None,
        mode: str | None = None,
        regularization_losses: list | None = None,
    ) -> tf.Tensor:
        """The wrapped head's training loss over the valid steps."""
        flat_labels, flat_logits, flat_features = self._flatten(labels, logits, features or {})
        return self._static_head.loss(flat_labels, flat_logits, flat_features, mode,
                                      regularization_losses)  # fmt: skip

    def predictions(self, logits: tf.Tensor, keys: list | None = None) -> dict:
        return self._static_head.predictions(logits, keys)

    def create_estimator_spec(
        self,
        features: dict,
        mode: str,
        logits: Any,
        labels: Any = None,
        optimizer: Any = None,
        trainable_variables: list | None = None,
        train_op_fn: Callable | None = None,
        update_ops: list | None = None,
        regularization_losses: list | None = None,
    ) -> EstimatorSpec:
        """The wrapped head's spec: over the valid steps (TRAIN, EVAL), or its per-step
        predictions plus the sequence mask (PREDICT)."""
        if mode == ModeKeys.PREDICT:
            spec = self._static_head.create_estimator_spec(features, mode, logits)
            predictions = dict(spec.predictions)
            predictions[self._mask_key] = base.feature(features, self._mask_key)
            return spec._replace(predictions=predictions)
        if labels is None:
            raise ValueError(f"You must provide a labels Tensor. Given: None. ({mode})")
        flat_labels, flat_logits, flat_features = self._flatten(labels, logits, features)
        return self._static_head.create_estimator_spec(
            flat_features, mode, flat_logits, flat_labels, optimizer=optimizer,
            trainable_variables=trainable_variables, train_op_fn=train_op_fn,
            update_ops=update_ops, regularization_losses=regularization_losses,
        )  # fmt: skip
