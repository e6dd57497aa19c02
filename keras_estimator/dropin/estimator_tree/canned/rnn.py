"""2.15's `canned/rnn.py`: `RNNClassifier` / `RNNEstimator` (keras_estimator.canned.rnn),
the cell and layer helpers, and `RNNModel`, the Keras model computing RNN logits from
sequence feature columns (Keras 3 here: our `DenseFeatures` for context columns, the
columns' own sequence tensors for sequence ones)."""

from __future__ import annotations

from typing import Any

import keras
import tensorflow as tf

from keras_estimator.canned import optimizers as optimizers_lib
from keras_estimator.canned import sequence_inputs
from keras_estimator.canned.rnn import (
    _LEARNING_RATE,
    USE_DEFAULT,
    RNNClassifier,
    RNNEstimator,
)
from keras_estimator.canned.rnn import _cell as _single_rnn_cell
from keras_estimator.canned.rnn import _check_cell_arguments as _verify_rnn_cell_input
from keras_estimator.canned.rnn import rnn_layer as _make_rnn_layer
from keras_estimator.keras_bridge.dense_features import DenseFeatures, _LayerStateManager
from keras_estimator.seam import internals
from keras_estimator.spec.mode_keys import ModeKeys

__all__ = [
    "USE_DEFAULT",
    "RNNClassifier",
    "RNNEstimator",
    "RNNModel",
    "_get_rnn_estimator_spec",
    "_make_rnn_cell_fn",
    "_make_rnn_layer",
    "_single_rnn_cell",
    "_verify_rnn_cell_input",
]
_FC = internals.feature_column_internals
_CLIP_NORM = 5.0


def _make_rnn_cell_fn(units: Any, cell_type: Any = "simple_rnn") -> Any:
    """A function returning one Keras RNN cell per entry of `units` (the cell itself for
    one entry), of `cell_type` ('simple_rnn', 'lstm', 'gru' or a cell class)."""

    def rnn_cell_fn() -> Any:
        cells = [_single_rnn_cell(n, cell_type) for n in units]
        return cells[0] if len(cells) == 1 else cells

    return rnn_cell_fn


class _SequenceFeatures(keras.layers.Layer):
    """Sequence columns -> ([batch, time, width] values, [batch] lengths), the columns'
    variables as this layer's weights."""

    def __init__(self, feature_columns: list, **kwargs: Any) -> None:
        super().__init__(name="sequence_features", **kwargs)
        self._feature_columns = sequence_inputs.check_sequence_columns(feature_columns)
        self._state_manager = _LayerStateManager(self)
        self._lookup_tables: list = []

    def build(self, input_shape: Any = None) -> None:
        for column in self._feature_columns:
            column.create_state(self._state_manager)
        super().build(input_shape)

    def call(self, features: dict) -> tuple:
        cache = _FC.FeatureTransformationCache(features)
        values, lengths = [], []
        for column in self._feature_columns:
            dense, length = column.get_sequence_dense_tensor(cache, self._state_manager)
            width = column.variable_shape.num_elements()
            values.append(tf.reshape(dense, [tf.shape(dense)[0], -1, width]))
            lengths.append(length)
        return tf.concat(values, -1), lengths[0]


class RNNModel(keras.Model):
    """A Keras RNN model: logits from sequence (and context) feature columns.

    Args:
        rnn_layer: a Keras RNN layer (`keras.layers.SimpleRNN(20)`, or `_make_rnn_layer`'s).
        units: the logits' size.
        sequence_feature_columns: sequence dense columns.
        context_feature_columns: dense columns repeated at every step, or None.
        activation: the logits layer's activation (None: raw logits).
        return_sequences: logits for every step ([batch, time, units]).
        **kwargs: for `keras.Model` (`name`).

    Example:
        >>> rating = tf.feature_column.embedding_column(
        ...     tf.feature_column.sequence_categorical_column_with_identity("rating", 5), 10)
        >>> model = RNNModel(keras.layers.SimpleRNN(20), 1, [rating])
        >>> model.compile("adam", "mse")
    """

    def __init__(
        self, rnn_layer: Any, units: int, sequence_feature_columns: Any,
        context_feature_columns: Any = None, activation: Any = None,
        return_sequences: bool = False, **kwargs: Any,
    ) -> None:  # fmt: skip
        super().__init__(**kwargs)
        self._sequence_feature_columns = list(sequence_feature_columns)
        self._context_feature_columns = list(context_feature_columns or [])
        self._sequence_features_layer = _SequenceFeatures(self._sequence_feature_columns)
        self._dense_features_layer = (
            DenseFeatures(self._context_feature_columns) if self._context_feature_columns else None
        )
        self._rnn_layer = rnn_layer
        self._return_sequences = return_sequences
        self._logits_layer = keras.layers.Dense(units, activation=activation, name="logits")

    def call(self, inputs: dict, training: Any = None) -> tf.Tensor:
        """The logits, [batch, units] (or [batch, time, units] with return_sequences).

        Raises:
            ValueError: unless `inputs` is a dict of tensors.
        """
        if not isinstance(inputs, dict):
            raise ValueError(
                f"inputs should be a dictionary of `Tensor`s. Given type: {type(inputs)}"
            )
        values, lengths = self._sequence_features_layer(inputs)
        if self._dense_features_layer is not None:
            context = self._dense_features_layer(inputs)
            steps = tf.shape(values)[1]
            tiled = tf.tile(context[:, tf.newaxis, :], tf.stack([1, steps, 1]))
            values = tf.concat([values, tf.cast(tiled, values.dtype)], -1)
        mask = tf.sequence_mask(lengths)
        outputs = self._rnn_layer(values, mask=mask, training=training)
        return self._logits_layer(outputs)

    def get_config(self) -> dict:
        """The config: the RNN layer, units, activation, columns (serialized)."""
        serialize = _FC.serialize_feature_column
        return {
            "name": self.name,
            "rnn_layer": keras.layers.serialize(self._rnn_layer),
            "units": self._logits_layer.units,
            "return_sequences": self._return_sequences,
            "activation": keras.activations.serialize(self._logits_layer.activation),
            "sequence_feature_columns": [serialize(c) for c in self._sequence_feature_columns],
            "context_feature_columns": [serialize(c) for c in self._context_feature_columns]
            or None,
        }

    @classmethod
    def from_config(cls, config: dict, custom_objects: Any = None) -> RNNModel:
        """The model `get_config` describes."""
        config = dict(config)
        deserialize = _FC.deserialize_feature_column
        rnn_layer = keras.layers.deserialize(config.pop("rnn_layer"), custom_objects)
        sequence = [deserialize(c, custom_objects) for c in config.pop("sequence_feature_columns")]
        context = [
            deserialize(c, custom_objects) for c in config.pop("context_feature_columns") or []
        ]
        activation = keras.activations.deserialize(config.pop("activation", None), custom_objects)
        return cls(
            rnn_layer=rnn_layer, sequence_feature_columns=sequence,
            context_feature_columns=context or None, activation=activation, **config,
        )  # fmt: skip


def _get_rnn_estimator_spec(
    features: dict, labels: Any, mode: str, head: Any, rnn_model: Any, optimizer: Any,
    return_sequences: bool,
) -> Any:  # fmt: skip
    """The `EstimatorSpec` of an RNN model_fn: `rnn_model`'s logits through `head`, trained
    with `optimizer` (a name: Adagrad at 0.05 with gradients clipped to norm 5)."""
    training = mode == ModeKeys.TRAIN
    logits = rnn_model(features, training=training)
    if return_sequences and head.input_sequence_mask_key not in features:
        lengths = rnn_model._sequence_features_layer(features)[1]
        features = {**features, head.input_sequence_mask_key: tf.sequence_mask(lengths)}
    if not training:
        return head.create_estimator_spec(features, mode, logits, labels)

    def train_op_fn(loss: tf.Tensor) -> Any:
        resolved = optimizers_lib.resolve_optimizer(optimizer, _LEARNING_RATE)
        if isinstance(optimizer, str):
            resolved.clipnorm = _CLIP_NORM
        mean_loss = getattr(head, "loss_reduction", "sum_over_batch_size") == "sum_over_batch_size"
        return optimizers_lib.minimize(resolved, loss, rnn_model.trainable_variables, mean_loss)

    return head.create_estimator_spec(features, mode, logits, labels, train_op_fn=train_op_fn)
