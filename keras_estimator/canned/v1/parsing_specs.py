"""tf.compat.v1.estimator's `classifier_parse_example_spec` / `regressor_parse_example_spec`:
the columns' spec from `tf.compat.v1.feature_column.make_parse_example_spec`, as 2.15's
v1 functions built it, plus the label and the weight column."""

from __future__ import annotations

from typing import Any

import tensorflow as tf

from keras_estimator.canned.parsing_specs import spec_with_label_and_weight

_MAKE_SPEC_V1 = tf.compat.v1.feature_column.make_parse_example_spec


def classifier_parse_example_spec(
    feature_columns: list,
    label_key: str,
    label_dtype: tf.DType = tf.int64,
    label_default: Any = None,
    weight_column: Any = None,
) -> dict:
    """`tf.io.parse_example` spec for a v1 classifier's features, label and weight.

    Example:
        >>> from keras_estimator import v1 as estimator
        >>> spec = estimator.classifier_parse_example_spec(columns, label_key="label")
    """
    label_spec = tf.io.FixedLenFeature((1,), label_dtype, label_default)
    return spec_with_label_and_weight(feature_columns, label_key, label_spec, weight_column,
                                      _MAKE_SPEC_V1)  # fmt: skip


def regressor_parse_example_spec(
    feature_columns: list,
    label_key: str,
    label_dtype: tf.DType = tf.float32,
    label_default: Any = None,
    label_dimension: int = 1,
    weight_column: Any = None,
) -> dict:
    """`tf.io.parse_example` spec for a v1 regressor's features, label and weight.

    Example:
        >>> spec = estimator.regressor_parse_example_spec(columns, label_key="price")
    """
    label_spec = tf.io.FixedLenFeature((label_dimension,), label_dtype, label_default)
    return spec_with_label_and_weight(feature_columns, label_key, label_spec, weight_column,
                                      _MAKE_SPEC_V1)  # fmt: skip
