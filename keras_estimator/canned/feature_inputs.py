"""Feature columns -> dense inputs and linear logits, inside the engine's traced step.

Keras 3 has no `DenseFeatures` / `LinearModel`; TensorFlow's own TF1 entry points,
`tf.compat.v1.feature_column.input_layer` and `linear_model`, still build the columns'
transformations and variables, and they do so through `get_variable`, which the engine
keys by TF1 name. Under the scopes tf.estimator used, the variables get tf.estimator's
names: `dnn/input_from_feature_columns/input_layer/<column>_embedding/embedding_weights`,
`linear/linear_model/<column>/weights`, `linear/linear_model/bias_weights`.
"""

from __future__ import annotations

import warnings
from typing import Any

import tensorflow as tf

from keras_estimator.seam import internals
from keras_estimator.utils.log import quiet_tf_deprecations

_V1 = tf.compat.v1
_COLUMN_TYPES = (internals.feature_column_internals.FeatureColumn,)


def check_feature_columns(feature_columns: Any, what: str = "feature_columns") -> list:
    """The columns as a list; raises on an empty or non-column entry."""
    if isinstance(feature_columns, _COLUMN_TYPES):
        feature_columns = [feature_columns]
    columns = list(feature_columns or [])
    if not columns:
        raise ValueError(f"{what} must not be empty.")
    for column in columns:
        if not isinstance(column, _COLUMN_TYPES) and not hasattr(column, "_transform_feature"):
            raise ValueError(
                f"Items of {what} must be a feature column (tf.feature_column.*). Given "
                f"(type {type(column)}): {column}."
            )
    for column in columns:
        if "Sequence" in type(column).__name__:
            raise ValueError(
                f"Canned DNN and linear models do not take sequence columns (as in "
                f"tf.estimator); {column.name} is a {type(column).__name__}. Expected numeric, "
                "bucketized, categorical, crossed, weighted, indicator or embedding columns. "
                "For sequences, write a model_fn with tf.keras.experimental.SequenceFeatures-"
                "style processing of your own."
            )
    names = [column.name for column in columns]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise ValueError(f"Duplicate feature column names in {what}: {duplicates}.")
    return columns


def feature_keys(columns: list) -> list[str]:
    """Every raw feature key the columns read, in first-seen order.

    Each column is asked on its own: columns may read one key differently (`age` as a
    number and, in a `crossed_column(["age", ...])`, as a string), which tf.estimator
    accepted; only `make_parse_example_spec` over all of them refuses that.
    """
    keys: dict[str, None] = {}
    with quiet_tf_deprecations():
        for column in columns:
            keys.update(dict.fromkeys(internals.feature_column_parse_spec(column)))
    return list(keys)


def check_features(features: Any, columns: list) -> dict:
    """The features dict; raises tf.estimator's error for a key a column needs."""
    if not isinstance(features, dict):
        raise ValueError(
            f"features should be a dictionary of `Tensor`s. Given type: {type(features)}"
        )
    for key in feature_keys(columns):
        if key not in features:
            raise ValueError(
                f"Feature {key} is not in features dictionary. Expected input_fn's features "
                f"to hold every key the feature columns read; it has {sorted(features)}."
            )
    return features


def dense_input(features: dict, columns: list) -> tf.Tensor:
    """[batch, width]: every column's dense value, concatenated (DNN input)."""
    check_features(features, columns)
    with _V1.variable_scope("input_from_feature_columns"), quiet_tf_deprecations():
        return _V1.feature_column.input_layer(features, columns)


def linear_logits(features: dict, columns: list, units: int, sparse_combiner: str) -> tf.Tensor:
    """[batch, units]: a weight per column value plus bias, summed (linear model)."""
    check_features(features, columns)
    if sparse_combiner not in ("sum", "mean", "sqrtn"):
        raise ValueError(
            f"sparse_combiner must be one of 'sum', 'mean', 'sqrtn'; given {sparse_combiner!r}."
        )
    with warnings.catch_warnings(), quiet_tf_deprecations():
        # linear_model runs on TF's private Keras 2 copy, whose deprecation notes
        # (`layer.updates`, `add_variable`) are about its own internals.
        warnings.filterwarnings("ignore", category=UserWarning, module=r"tensorflow\.python\.keras")
        return _V1.feature_column.linear_model(
            features, columns, units=units, sparse_combiner=sparse_combiner
        )
