"""`DenseFeatures`: a Keras 3 layer turning `tf.feature_column` columns into one dense tensor.

Keras 3 dropped `tf.keras.layers.DenseFeatures`; this is it again, over the same
TensorFlow feature columns: every column's dense value, columns sorted by name, each
reshaped to `[batch, width]` and concatenated, exactly what
`tf.compat.v1.feature_column.input_layer` computes. The columns' variables (embedding
weights) are the layer's weights; their lookup tables are created once and kept on the
layer.
"""

from __future__ import annotations

import threading
from typing import Any

import keras
import tensorflow as tf

from keras_estimator.seam import internals
from keras_estimator.utils.log import quiet_tf_deprecations

_FC = internals.feature_column_internals


class _LayerStateManager(internals.feature_column_internals.StateManager):
    """Where the columns keep their state: variables as the layer's weights, tables on it."""

    def __init__(self, layer: keras.layers.Layer) -> None:
        self._layer = layer
        self._variables: dict[Any, dict[str, Any]] = {}
        self._resources: dict[Any, dict[str, Any]] = {}

    def create_variable(
        self,
        feature_column: Any,
        name: str,
        shape: Any,
        dtype: Any = None,
        trainable: bool = True,
        use_resource: bool = True,
        initializer: Any = None,
    ) -> tf.Variable:
        owned = self._variables.setdefault(feature_column, {})
        if name in owned:
            raise ValueError(
                f"Variable {name!r} of feature column {feature_column.name!r} already exists. "
                "Expected each column state to be created once. Fix: do not call "
                f"create_state twice. Received: name={name!r}"
            )
        with tf.name_scope(feature_column.name):  # TF1 name: <layer>/<column>/<name>
            weight = self._layer.add_weight(
                name=name,
                shape=tuple(tf.TensorShape(shape).as_list()),
                dtype=tf.as_dtype(dtype or tf.float32).name,
                initializer=initializer or "glorot_uniform",
                trainable=self._layer.trainable and trainable,
            )
        owned[name] = weight
        return weight

    def get_variable(self, feature_column: Any, name: str) -> tf.Variable:
        # The tf.Variable behind the Keras weight: TensorFlow's embedding ops take it as is
        # (sparse gradients). While Keras traces symbolically its creation is deferred;
        # the Keras weight then stands for its initial value.
        weight = self._variables[feature_column][name]
        backing = internals.keras_variable_backing(weight)
        return tf.convert_to_tensor(weight) if backing is None else backing

    def add_resource(self, feature_column: Any, resource_name: str, resource: Any) -> None:
        self._resources.setdefault(feature_column, {})[resource_name] = resource
        self._layer._lookup_tables.append(resource)  # tracked: a SavedModel re-creates it

    def has_resource(self, feature_column: Any, resource_name: str) -> bool:
        return resource_name in self._resources.get(feature_column, {})

    def get_resource(self, feature_column: Any, resource_name: str) -> Any:
        return self._resources[feature_column][resource_name]


def _check_columns(feature_columns: Any) -> list:
    if isinstance(feature_columns, _FC.FeatureColumn):
        feature_columns = [feature_columns]
    columns = list(feature_columns or [])
    if not columns:
        raise ValueError(
            "feature_columns must not be empty. Expected one or more dense feature columns "
            "(numeric, bucketized, indicator, embedding). Fix: pass them as a list. "
            f"Received: feature_columns={feature_columns!r}"
        )
    for column in columns:
        if not isinstance(column, _FC.DenseColumn):
            raise ValueError(
                f"Items of feature_columns must be a DenseColumn; {column!r:.120} is not. "
                "Expected numeric, bucketized, indicator or embedding columns. Fix: wrap a "
                "categorical column with tf.feature_column.indicator_column or "
                f"embedding_column. Received: type={type(column).__name__}"
            )
    names = [column.name for column in columns]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise ValueError(
            f"Duplicate feature column names in feature_columns: {duplicates}. Expected "
            "each column once. Fix: drop the repeated columns. "
            f"Received: names={names}"
        )
    return sorted(columns, key=lambda column: column.name)


def with_columns(config: dict, columns: list) -> dict:
    """A feature-column layer's config: the layer's, plus its columns serialized."""
    return {**config, "feature_columns": [_FC.serialize_feature_column(c) for c in columns]}


def columns_of(config: dict) -> dict:
    """The config `with_columns` made, its columns deserialized (the layer's arguments)."""
    columns = [_FC.deserialize_feature_column(c) for c in config["feature_columns"]]
    return {**config, "feature_columns": columns}


def _as_tensors(features: dict) -> dict:
    """Plain values of a features dict (lists, numbers, numpy arrays) as tensors."""
    return {
        key: value
        if isinstance(value, tf.Tensor | tf.SparseTensor | tf.RaggedTensor | tf.Variable)
        or keras.backend.is_keras_tensor(value)
        else tf.convert_to_tensor(value)
        for key, value in features.items()
    }


class DenseFeatures(keras.layers.Layer):
    """A layer producing a dense tensor from feature columns, as `tf.keras.layers.DenseFeatures`.

    Call it on a dict of feature name to Tensor / SparseTensor; it returns `[batch, width]`
    float values: each column's dense value (columns sorted by name), concatenated.
    Embedding columns' variables are the layer's weights (trainable unless
    `trainable=False`). Works in functional (dict of `keras.Input`), Sequential and
    subclassed Keras 3 models, and inside an Estimator's model_fn.

    Example:
        >>> columns = [tf.feature_column.numeric_column("age"),
        ...            tf.feature_column.embedding_column(
        ...                tf.feature_column.categorical_column_with_hash_bucket("job", 50), 4)]
        >>> inputs = {"age": keras.Input((1,), name="age"),
        ...           "job": keras.Input((1,), dtype="string", name="job")}
        >>> outputs = keras.layers.Dense(1)(DenseFeatures(columns)(inputs))
        >>> model = keras.Model(inputs, outputs)
    """

    def __init__(
        self,
        feature_columns: Any,
        trainable: bool = True,
        name: str | None = None,
        partitioner: Any = None,
        **kwargs: Any,
    ) -> None:
        if partitioner is not None:
            raise ValueError(
                "DenseFeatures takes no partitioner on Keras 3: variables are not partitioned. "
                "Expected partitioner=None. Fix: drop the argument (use a "
                f"tf.distribute strategy to shard). Received: partitioner={partitioner!r}"
            )
        super().__init__(trainable=trainable, name=name, **kwargs)
        self._feature_columns = _check_columns(feature_columns)
        self._state_manager = _LayerStateManager(self)
        self._lookup_tables: list = []
        self._call_state = threading.local()  # not a dict attribute: Keras would copy it

    def build(self, input_shape: Any = None) -> None:
        with quiet_tf_deprecations():
            for column in self._feature_columns:
                column.create_state(self._state_manager)
        self.built = True

    def __call__(self, *args: Any, cols_to_output_tensors: dict | None = None, **kwargs: Any):
        # Keras copies the call's nested arguments: the caller's dict is filled here.
        self._call_state.cols_to_output_tensors = cols_to_output_tensors
        if args and isinstance(args[0], dict):
            # tf.keras 2 took plain values ({"type": [0, 1, 2]}); Keras 3 takes tensors only.
            args = (_as_tensors(args[0]), *args[1:])
        try:
            return super().__call__(*args, **kwargs)
        finally:
            self._call_state.cols_to_output_tensors = None

    def call(
        self,
        features: dict,
        cols_to_output_tensors: dict | None = None,
        training: bool | None = None,
    ) -> tf.Tensor:
        """`[batch, width]`: the columns' dense values; `cols_to_output_tensors` (a dict)
        receives each column's part."""
        if not isinstance(features, dict):
            raise ValueError(
                "DenseFeatures expects a dict of feature name to Tensor. Expected e.g. "
                "{'age': ..., 'job': ...}. Fix: pass the features dict (for a Sequential "
                f"model, feed dicts). Received: type(features)={type(features).__name__}"
            )
        if cols_to_output_tensors is None:
            cols_to_output_tensors = getattr(self._call_state, "cols_to_output_tensors", None)
        cache = _FC.FeatureTransformationCache(features)
        outputs = []
        with quiet_tf_deprecations():
            for column in self._feature_columns:
                with tf.name_scope(column.name):
                    tensor = column.get_dense_tensor(cache, self._state_manager)
                    width = column.variable_shape.num_elements()
                    tensor = tf.reshape(tensor, (tf.shape(tensor)[0], width))
                outputs.append(tensor)
                if cols_to_output_tensors is not None:
                    cols_to_output_tensors[column] = tensor
        return tf.concat(outputs, axis=1)

    def compute_output_shape(self, input_shape: Any) -> tuple:
        shapes = list(input_shape.values()) if isinstance(input_shape, dict) else [input_shape]
        batch = shapes[0][0] if shapes and shapes[0] else None
        width = sum(column.variable_shape.num_elements() for column in self._feature_columns)
        return (batch, width)

    def get_config(self) -> dict:
        return with_columns(super().get_config(), self._feature_columns)

    @classmethod
    def from_config(cls, config: dict) -> DenseFeatures:
        return cls(**columns_of(config))
