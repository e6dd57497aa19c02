"""Sequence feature columns -> the RNN's padded input and lengths, inside the traced step.

What Keras 2's `SequenceFeatures` layer did for tf.estimator 2.15's RNN estimators, built on
the columns' own `get_sequence_dense_tensor`: each column (sorted by name) gives a
[batch, time, width] tensor and the sequence lengths; their values are concatenated on the
last axis. Column variables are made by `get_variable` (which the engine keys by TF1 name)
under 2.15's names: `sequence_features/<column>/embedding_weights`; context columns'
under `dense_features/<column>/...`.
"""

from __future__ import annotations

from typing import Any

import tensorflow as tf

from keras_estimator.seam import internals

_V1 = tf.compat.v1
_FC = internals.feature_column_internals


class _GetVariableStateManager(internals.feature_column_internals.StateManager):
    """Column state as `get_variable`s in `<scope>/<column name>/<variable>`."""

    def __init__(self, trainable: bool = True) -> None:
        self._trainable = trainable
        self._variables: dict[tuple[str, str], tf.Variable] = {}

    def create_variable(self, feature_column, name, shape, dtype=None, trainable=True,
                        use_resource=True, initializer=None):  # fmt: skip
        with _V1.variable_scope(feature_column.name):
            variable = _V1.get_variable(
                name, shape=shape, dtype=dtype, initializer=initializer,
                trainable=self._trainable and trainable, use_resource=True,
            )  # fmt: skip
        self._variables[(feature_column.name, name)] = variable
        return variable

    def get_variable(self, feature_column, name):
        return self._variables[(feature_column.name, name)]


def check_sequence_columns(columns: Any) -> list:
    """The sequence columns as a list, sorted by name; raises on a non-sequence column."""
    columns = sorted(list(columns or []), key=lambda column: column.name)
    if not columns:
        raise ValueError("sequence_feature_columns must not be empty.")
    for column in columns:
        if not isinstance(column, _FC.SequenceDenseColumn):
            raise ValueError(
                "All sequence_feature_columns must be sequence dense columns (a "
                "tf.feature_column.sequence_numeric_column, or an embedding / indicator column "
                "of a sequence_categorical_column_*). Fix: wrap sequence categorical columns in "
                f"embedding_column or indicator_column. Received: {column!r}"
            )
    return columns


def sequence_input(features: dict, columns: list) -> tuple[tf.Tensor, tf.Tensor]:
    """([batch, time, width] float32, [batch] int64 lengths) of the sequence columns."""
    cache = _FC.FeatureTransformationCache(features)
    state = _GetVariableStateManager()
    values, lengths = [], []
    with _V1.variable_scope("sequence_features"):
        for column in columns:
            column.create_state(state)
            dense, length = column.get_sequence_dense_tensor(cache, state)
            width = column.variable_shape.num_elements()
            values.append(tf.reshape(dense, [tf.shape(dense)[0], -1, width]))
            lengths.append(length)
    with tf.control_dependencies(
        [tf.debugging.assert_equal(lengths[0], other, message="sequence lengths differ")
         for other in lengths[1:]]
    ):  # fmt: skip
        length = tf.identity(lengths[0])
    return tf.concat(values, -1), length


def with_context(sequence: tf.Tensor, features: dict, columns: list) -> tf.Tensor:
    """The sequence with the context columns' values repeated at every time step."""
    cache = _FC.FeatureTransformationCache(features)
    state = _GetVariableStateManager()
    values = []
    with _V1.variable_scope("dense_features"):
        for column in sorted(columns, key=lambda c: c.name):
            column.create_state(state)
            dense = column.get_dense_tensor(cache, state)
            values.append(tf.reshape(dense, [tf.shape(dense)[0], -1]))
    context = tf.concat(values, -1)
    steps = tf.shape(sequence)[1]
    tiled = tf.tile(context[:, tf.newaxis, :], tf.stack([1, steps, 1]))
    return tf.concat([sequence, tiled], -1)
