"""Parsing specs for tf.Example data: the columns' features plus the label and weight."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tensorflow as tf

from keras_estimator.utils.log import quiet_tf_deprecations


def spec_with_label_and_weight(
    feature_columns: list,
    label_key: str,
    label_spec: Any,
    weight_column: Any,
    make_parse_example_spec: Callable[[list], dict] = tf.feature_column.make_parse_example_spec,
) -> dict:
    """The columns' parsing spec (v2 function by default: it takes every column kind,
    sequence columns too, as 2.15's did) plus the label's and the weight column's."""
    with quiet_tf_deprecations():
        spec = dict(make_parse_example_spec(feature_columns))
    if label_key in spec:
        raise ValueError(
            f"label should not be used as feature. label_key: {label_key}, features: {spec.keys()}"
        )
    spec[label_key] = label_spec
    if weight_column is None:
        return spec
    if isinstance(weight_column, str):
        weight_column = tf.feature_column.numeric_column(weight_column)
    if type(weight_column).__name__ != "NumericColumn":
        raise ValueError(
            "weight_column should be an instance of tf.feature_column.numeric_column. "
            f"Given type: {type(weight_column)} value: {weight_column}"
        )
    if weight_column.key in spec:
        raise ValueError(
            f"weight_column should not be used as feature. weight_column: "
            f"{weight_column.key}, features: {spec.keys()}"
        )
    spec.update(weight_column.parse_example_spec)
    return spec


def classifier_parse_example_spec(
    feature_columns: list,
    label_key: str,
    label_dtype: tf.DType = tf.int64,
    label_default: Any = None,
    weight_column: Any = None,
) -> dict:
    """`tf.io.parse_example` spec for a classifier's features, label and weight.

    Example:
        >>> spec = classifier_parse_example_spec(columns, label_key="label")
        >>> features = tf.io.parse_example(serialized, spec); labels = features.pop("label")
    """
    label_spec = tf.io.FixedLenFeature((1,), label_dtype, label_default)
    return spec_with_label_and_weight(feature_columns, label_key, label_spec, weight_column)


def regressor_parse_example_spec(
    feature_columns: list,
    label_key: str,
    label_dtype: tf.DType = tf.float32,
    label_default: Any = None,
    label_dimension: int = 1,
    weight_column: Any = None,
) -> dict:
    """`tf.io.parse_example` spec for a regressor's features, label and weight.

    Example:
        >>> spec = regressor_parse_example_spec(columns, label_key="price")
    """
    label_spec = tf.io.FixedLenFeature((label_dimension,), label_dtype, label_default)
    return spec_with_label_and_weight(feature_columns, label_key, label_spec, weight_column)
