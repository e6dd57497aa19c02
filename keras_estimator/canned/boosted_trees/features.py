"""Feature columns -> one integer bucket per example and feature (what the trees split on).

As in tf.estimator 2.8, columns are sorted by name and each becomes one or more features:
a bucketized column one feature (its bucket id), an indicator column one binary feature per
category, a numeric column of shape (k,) k features, bucketized by quantile boundaries
learned from the first batches of training. Feature ids index that sorted list.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import tensorflow as tf

from keras_estimator.canned import feature_inputs
from keras_estimator.utils.log import quiet_tf_deprecations

_V1 = tf.compat.v1
_fc = tf.feature_column
# The v2 column classes, found through the public constructors (their modules are private).
with quiet_tf_deprecations():
    _BUCKETIZED = type(_fc.bucketized_column(_fc.numeric_column("_"), [0.0]))
    _INDICATOR = type(_fc.indicator_column(_fc.categorical_column_with_identity("_", 2)))
    _NUMERIC = type(_fc.numeric_column("_"))


@dataclasses.dataclass(frozen=True)
class FeatureLayout:
    """How the sorted columns map onto feature ids.

    Attributes:
        columns: The columns, sorted by name.
        names: The column name of each feature id (importances and explanations group by it).
        num_buckets: The number of buckets of each feature id.
        numeric_ids: The feature ids bucketized by learned quantile boundaries.
    """

    columns: tuple
    names: tuple[str, ...]
    num_buckets: tuple[int, ...]
    numeric_ids: tuple[int, ...]

    @property
    def num_features(self) -> int:
        return len(self.names)

    @property
    def max_buckets(self) -> int:
        return max(self.num_buckets)


def _width(column: Any) -> int:
    shape = tuple(column.variable_shape)
    if len(shape) > 1:
        raise ValueError(
            f"BoostedTrees estimators take numeric columns of rank 1 (shape (k,)), as in "
            f"tf.estimator 2.8; column {column.name!r} has shape {shape}. Reshape the feature "
            f"or split it into several columns. Received: column={column}"
        )
    return int(shape[0]) if shape else 1


def feature_layout(feature_columns: Any, num_quantiles: int) -> FeatureLayout:
    """The layout of `feature_columns`; raises on a column the trees cannot split on."""
    columns = sorted(feature_inputs.check_feature_columns(feature_columns), key=lambda c: c.name)
    names: list[str] = []
    buckets: list[int] = []
    numeric: list[int] = []
    for column in columns:
        if isinstance(column, _BUCKETIZED):
            if _width(column.source_column) != 1:
                raise ValueError(
                    f"BoostedTrees estimators take bucketized columns over one value per "
                    f"example; {column.name!r} bucketizes shape {column.source_column.shape}. "
                    f"Bucketize each value in a column of its own. Received: column={column}"
                )
            names.append(column.name)
            buckets.append(len(column.boundaries) + 1)
        elif isinstance(column, _INDICATOR):
            categories = column.categorical_column.num_buckets
            names.extend([column.categorical_column.name] * categories)
            buckets.extend([2] * categories)
        elif isinstance(column, _NUMERIC) and column.dtype.is_floating:
            for _ in range(_width(column)):
                numeric.append(len(names))
                names.append(column.name)
                buckets.append(num_quantiles)
        else:
            raise ValueError(
                f"BoostedTrees estimators split on bucketized, indicator and float numeric "
                f"columns (tf.estimator 2.8's dense columns); {column.name!r} is a "
                f"{type(column).__name__}. Wrap a categorical column in "
                f"tf.feature_column.indicator_column. Received: column={column}"
            )
    return FeatureLayout(tuple(columns), tuple(names), tuple(buckets), tuple(numeric))


def _dense(features: dict, column: Any) -> tf.Tensor:
    with quiet_tf_deprecations():
        return _V1.feature_column.input_layer(features, [column])


def raw_features(features: dict, layout: FeatureLayout) -> list[tf.Tensor]:
    """Per feature id, a [batch] tensor: bucket ids, or float values for numeric features."""
    feature_inputs.check_features(features, list(layout.columns))
    values: list[tf.Tensor] = []
    with _V1.name_scope("transform_features"):
        for column in layout.columns:
            if isinstance(column, _BUCKETIZED):
                source = _dense(features, column.source_column)[:, 0]
                boundaries = tf.constant(column.boundaries, tf.float32)
                values.append(tf.searchsorted(boundaries, source, side="right", out_type=tf.int32))
            elif isinstance(column, _INDICATOR):
                hot = _dense(features, column)
                values.extend(tf.unstack(tf.cast(hot > 0, tf.int32), num=hot.shape[1], axis=1))
            else:
                dense = _dense(features, column)
                values.extend(tf.unstack(dense, num=dense.shape[1], axis=1))
    return values


def numeric_values(raw: list[tf.Tensor], layout: FeatureLayout) -> tf.Tensor:
    """[batch, numeric features]: the float values quantiles are learned from."""
    return tf.stack([raw[i] for i in layout.numeric_ids], axis=1)


def bucketize(
    raw: list[tf.Tensor], layout: FeatureLayout, boundaries: tf.Tensor | None
) -> tf.Tensor:
    """[batch, features] int32 bucket ids; numeric features through `boundaries` [n, q - 1]."""
    ids = list(raw)
    for row, feature_id in enumerate(layout.numeric_ids):
        assert boundaries is not None  # None only without numeric features (no sample)
        value = tf.expand_dims(raw[feature_id], 0)
        ids[feature_id] = tf.searchsorted(
            boundaries[row][tf.newaxis], value, side="right", out_type=tf.int32
        )[0]
    return tf.stack(ids, axis=1)
