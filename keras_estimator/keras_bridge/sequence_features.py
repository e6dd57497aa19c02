"""`SequenceFeatures`: a Keras 3 layer turning sequence feature columns into the padded
input of a sequence model, as `tf.keras.experimental.SequenceFeatures` did (Keras 3 dropped
it; TF-Ranking's sequence columns and TF1-era RNN code call it).

Each column (sorted by name) gives its `[batch, time, width]` dense value and the sequence
lengths; the values are concatenated on the last axis and the lengths, which must agree,
come back beside them. The columns' variables are the layer's weights (as in
`DenseFeatures`, whose state manager this shares).
"""

from __future__ import annotations

from typing import Any

import keras
import tensorflow as tf

from keras_estimator.keras_bridge.dense_features import (
    _LayerStateManager,
    columns_of,
    with_columns,
)
from keras_estimator.seam import internals
from keras_estimator.utils.log import quiet_tf_deprecations

_FC = internals.feature_column_internals


def _check_sequence_columns(feature_columns: Any) -> list:
    if isinstance(feature_columns, _FC.FeatureColumn):
        feature_columns = [feature_columns]
    columns = list(feature_columns or [])
    if not columns:
        raise ValueError(
            "feature_columns must not be empty. Expected sequence columns "
            "(tf.feature_column.sequence_numeric_column, or an embedding / indicator column "
            "of a sequence_categorical_column_*). Fix: pass them as a list. "
            f"Received: feature_columns={feature_columns!r}"
        )
    for column in columns:
        if not isinstance(column, _FC.SequenceDenseColumn):
            raise ValueError(
                "All feature_columns must be sequence dense columns. Expected a "
                "sequence_numeric_column, or an embedding / indicator column of a "
                "sequence_categorical_column_*. Fix: wrap sequence categorical columns in "
                f"embedding_column or indicator_column. Received: {column!r:.200}"
            )
    return sorted(columns, key=lambda column: column.name)


class SequenceFeatures(keras.layers.Layer):
    """A layer producing a sequence model's input from sequence feature columns.

    Call it on a dict of feature name to Tensor / SparseTensor; it returns
    `(sequence_input, sequence_length)`: `[batch, time, width]` float values (each
    column's value, columns sorted by name, concatenated on the last axis) and the
    `[batch]` int64 lengths.

    Args:
        feature_columns: the sequence dense columns (one column, or a list).
        trainable: whether the columns' variables (embeddings) train.
        name: the layer's name.

    Raises:
        ValueError: no column, or a column that is not a sequence dense column.

    Example:
        >>> tokens = tf.feature_column.sequence_categorical_column_with_identity("t", 10)
        >>> layer = SequenceFeatures([tf.feature_column.embedding_column(tokens, 4)])
        >>> sequence_input, sequence_length = layer({"t": sparse_tokens})
    """

    def __init__(
        self, feature_columns: Any, trainable: bool = True, name: str | None = None, **kwargs: Any
    ) -> None:
        super().__init__(trainable=trainable, name=name, **kwargs)
        self._feature_columns = _check_sequence_columns(feature_columns)
        self._state_manager = _LayerStateManager(self)
        self._lookup_tables: list = []

    def build(self, input_shape: Any = None) -> None:
        with quiet_tf_deprecations():
            for column in self._feature_columns:
                column.create_state(self._state_manager)
        self.built = True

    def call(self, features: dict, training: bool | None = None) -> tuple[tf.Tensor, tf.Tensor]:
        if not isinstance(features, dict):
            raise ValueError(
                "SequenceFeatures expects a dict of feature name to Tensor or SparseTensor. "
                f"Fix: pass the features dict. Received: type={type(features).__name__}"
            )
        cache = _FC.FeatureTransformationCache(features)
        values, lengths = [], []
        with quiet_tf_deprecations():
            for column in self._feature_columns:
                with tf.name_scope(column.name):
                    dense, length = column.get_sequence_dense_tensor(cache, self._state_manager)
                    width = column.variable_shape.num_elements()
                    values.append(tf.reshape(dense, [tf.shape(dense)[0], -1, width]))
                    lengths.append(length)
        checks = [
            tf.debugging.assert_equal(lengths[0], other, message="sequence lengths differ")
            for other in lengths[1:]
        ]
        with tf.control_dependencies(checks):
            length = tf.identity(lengths[0])
        return tf.concat(values, -1), length

    def get_config(self) -> dict:
        return with_columns(super().get_config(), self._feature_columns)

    @classmethod
    def from_config(cls, config: dict) -> SequenceFeatures:
        return cls(**columns_of(config))
