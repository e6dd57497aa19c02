"""`tf.keras.experimental.SequenceFeatures` after install(): sequence columns to the padded
input and lengths, eagerly and inside a model_fn (TF-Ranking's sequence columns)."""

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as estimator
from keras_estimator.keras_bridge.sequence_features import SequenceFeatures


def _tokens():
    # Two sequences: [1, 2, 3] and [4].
    return tf.SparseTensor(indices=[[0, 0], [0, 1], [0, 2], [1, 0]], values=[1, 2, 3, 4],
                           dense_shape=[2, 3])  # fmt: skip


def test_sequence_features_pads_the_columns_and_returns_the_lengths():
    tokens = tf.feature_column.sequence_categorical_column_with_identity("t", 10)
    indicator = tf.feature_column.indicator_column(tokens)
    numbers = tf.feature_column.sequence_numeric_column("n")
    layer = SequenceFeatures([numbers, indicator])
    values = tf.SparseTensor([[0, 0], [0, 1], [0, 2], [1, 0]], [0.5, 1.5, 2.5, 3.5], [2, 3])
    sequence, length = layer({"t": _tokens(), "n": values})
    assert sequence.shape == (2, 3, 11) and list(length.numpy()) == [3, 1]
    # Columns sorted by name: "n" (1 wide), then "t_indicator" (10 wide).
    np.testing.assert_allclose(sequence[0, :, 0], [0.5, 1.5, 2.5])
    assert sequence[1, 0, 1 + 4] == 1.0 and float(tf.reduce_sum(sequence[1, 1:])) == 0.0


def test_install_provides_it_under_tf_keras_experimental(tmp_path):
    estimator.install()
    try:
        tokens = tf.feature_column.sequence_categorical_column_with_identity("t", 10)
        column = tf.feature_column.embedding_column(tokens, 4)
        layer = tf.keras.experimental.SequenceFeatures(column)  # one column, as TF-Ranking
        sequence, length = layer({"t": _tokens()})
        assert sequence.shape == (2, 3, 4) and len(layer.trainable_weights) == 1
    finally:
        estimator.uninstall()
    assert not hasattr(tf.keras, "experimental") or not hasattr(
        tf.keras.experimental, "SequenceFeatures"
    )


def test_a_non_sequence_column_is_refused_clearly():
    with pytest.raises(ValueError, match="sequence dense columns"):
        SequenceFeatures([tf.feature_column.numeric_column("x")])


def test_its_config_round_trips():
    tokens = tf.feature_column.sequence_categorical_column_with_identity("t", 10)
    layer = SequenceFeatures([tf.feature_column.embedding_column(tokens, 4)], name="sf")
    again = SequenceFeatures.from_config(layer.get_config())
    assert again.name == "sf" and again(dict(t=_tokens()))[0].shape == (2, 3, 4)
