"""Input statistics and state helpers of the time-series models (tf.estimator 2.15's).

`InputStatisticsFromMiniBatch` keeps running moments of the series in non-trainable
variables (`input_statistics/...`), updated by every training batch; models scale their
data with them. `replicate_state` copies one unbatched state across a batch.
"""

from __future__ import annotations

import collections
from typing import Any

import tensorflow as tf

from keras_estimator.canned.timeseries.feature_keys import TrainEvalFeatures

_V1 = tf.compat.v1


def replicate_state(start_state: Any, batch_size: Any) -> Any:
    """Returns `start_state` (a nested structure of tensors without a batch dimension) with
    each tensor repeated `batch_size` times along a new first dimension."""

    def replicate(tensor: Any) -> tf.Tensor:
        tensor = tf.convert_to_tensor(tensor)
        multiples = tf.concat([[batch_size], tf.ones([tf.rank(tensor)], tf.int32)], axis=0)
        return tf.tile(tensor[None, ...], multiples)

    return tf.nest.map_structure(replicate, start_state)


Moments = collections.namedtuple("Moments", ["mean", "variance"])
Moments.__doc__ = "The mean and variance of each feature, each of shape [num_features]."

InputStatistics = collections.namedtuple(
    "InputStatistics",
    ["series_start_moments", "overall_feature_moments", "start_time", "total_observation_count"],
)
InputStatistics.__doc__ = """What is known of the input series.

Attributes:
    series_start_moments: `Moments` of the first values of the series (the earliest chunk
        seen so far).
    overall_feature_moments: `Moments` over every value seen so far.
    start_time: the lowest time seen so far (int64 scalar).
    total_observation_count: the estimated number of observations in the whole series,
        from the time span seen and the spacing of times within chunks (int64 scalar).
"""

_Auxiliary = collections.namedtuple(
    "_Auxiliary",
    ["max_time_seen", "chunk_count", "inter_observation_duration_sum", "example_count",
     "overall_feature_sum", "overall_feature_sum_of_squares"],
)  # fmt: skip


class InputStatisticsFromMiniBatch:
    """Estimates `InputStatistics` from the training batches, as tf.estimator 2.15 did.

    Args:
        num_features: the number of values per time.
        dtype: the floating point dtype of the values.
        starting_variance_window_size: how many points of the earliest chunk give the
            series-start moments.
    """

    def __init__(self, num_features: int, dtype: Any, starting_variance_window_size: int = 16):
        self._num_features = num_features
        self._dtype = tf.as_dtype(dtype)
        self._starting_variance_window_size = starting_variance_window_size

    def initialize_graph(self, features: dict, update_statistics: bool = True) -> InputStatistics:
        """Creates (or reuses) the statistics variables; with `update_statistics` and both
        `times` and `values` in `features`, also updates them from this batch.

        Args:
            features: the batch (`times` [batch, window], `values` [batch, window, n]).
            update_statistics: whether this batch updates the statistics (training).

        Returns:
            An `InputStatistics` of tensors, read after this batch's update.
        """
        with _V1.variable_scope("input_statistics", use_resource=True):
            statistics = self._statistics_variables()
        with _V1.variable_scope("input_statistics_auxiliary", use_resource=True):
            auxiliary = self._auxiliary_variables()
        times = features.get(TrainEvalFeatures.TIMES)
        values = features.get(TrainEvalFeatures.VALUES)
        if not update_statistics or times is None or values is None:
            return tf.nest.map_structure(tf.convert_to_tensor, statistics)
        update = self._update(statistics, auxiliary, times, values)
        with tf.control_dependencies([update]):
            read = tf.nest.map_structure(tf.identity, statistics)
        # The reported start is never later than this batch's first time.
        start_time = tf.minimum(read.start_time, tf.cast(tf.reduce_min(times), tf.int64))
        return read._replace(start_time=start_time)

    def _variable(self, name: str, shape: list, dtype: Any, initial: Any) -> tf.Variable:
        return _V1.get_variable(
            name, shape=shape, dtype=dtype, trainable=False,
            initializer=_V1.constant_initializer(initial),
        )  # fmt: skip

    def _statistics_variables(self) -> InputStatistics:
        n, dtype = [self._num_features], self._dtype
        return InputStatistics(
            series_start_moments=Moments(
                self._variable("series_start_mean", n, dtype, 0.0),
                self._variable("series_start_variance", n, dtype, 1.0),
            ),
            overall_feature_moments=Moments(
                self._variable("overall_feature_mean", n, dtype, 0.0),
                self._variable("overall_feature_var", n, dtype, 1.0),
            ),
            start_time=self._variable("start_time", [], tf.int64, tf.int64.max),
            total_observation_count=self._variable("total_observation_count", [], tf.int64, 1),
        )

    def _auxiliary_variables(self) -> _Auxiliary:
        n, dtype = [self._num_features], self._dtype
        return _Auxiliary(
            max_time_seen=self._variable("max_time_seen", [], tf.int64, tf.int64.min),
            chunk_count=self._variable("chunk_count", [], tf.int64, 0),
            inter_observation_duration_sum=self._variable(
                "inter_observation_duration_sum", [], dtype, 0.0
            ),
            example_count=self._variable("example_count", [], tf.int64, 0),
            overall_feature_sum=self._variable("overall_feature_sum", n, dtype, 0.0),
            overall_feature_sum_of_squares=self._variable(
                "overall_feature_sum_of_squares", n, dtype, 0.0
            ),
        )

    def _update(self, statistics: InputStatistics, aux: _Auxiliary, times: Any, values: Any):  # noqa: ANN202
        dtype = self._dtype
        times = tf.cast(times, tf.int64)
        values = tf.cast(values, dtype)
        window = tf.cast(tf.shape(times)[1] - 1, dtype)
        # Time units per observation within each chunk of the batch.
        spacing = tf.cast(tf.reduce_max(times, 1) - tf.reduce_min(times, 1), dtype) / window
        max_time = aux.max_time_seen.assign(tf.maximum(aux.max_time_seen, tf.reduce_max(times)))
        counts = tf.group(
            aux.chunk_count.assign_add(tf.shape(times, out_type=tf.int64)[0]),
            aux.inter_observation_duration_sum.assign_add(tf.reduce_sum(spacing)),
            aux.example_count.assign_add(tf.size(times, out_type=tf.int64)),
            aux.overall_feature_sum.assign_add(tf.reduce_sum(values, [0, 1])),
            aux.overall_feature_sum_of_squares.assign_add(tf.reduce_sum(values**2, [0, 1])),
        )
        with tf.control_dependencies([counts, max_time]):
            count = tf.cast(aux.example_count.read_value(), dtype)
            mean = aux.overall_feature_sum.read_value() / count
            squares = aux.overall_feature_sum_of_squares.read_value() / count
            # The unbiased variance: n / (n - 1) times the plain one.
            moments = tf.group(
                statistics.overall_feature_moments.mean.assign(mean),
                statistics.overall_feature_moments.variance.assign(
                    count / (count - 1.0) * (squares - mean**2)
                ),
            )
            earliest = tf.cast(tf.argmin(times[:, 0]), tf.int32)

            def start_moments() -> tf.Operation:
                first = values[earliest, : self._starting_variance_window_size]
                start_mean, start_variance = tf.nn.moments(first, axes=[0])
                return tf.group(
                    statistics.series_start_moments.mean.assign(start_mean),
                    statistics.series_start_moments.variance.assign(start_variance),
                )

            # Whenever a chunk starts at (or before) the earliest time seen so far.
            series_start = tf.cond(
                times[earliest, 0] <= statistics.start_time.read_value(), start_moments, tf.no_op
            )
            with tf.control_dependencies([series_start]):
                start_time = statistics.start_time.assign(
                    tf.minimum(statistics.start_time, tf.reduce_min(times))
                )
            spacing_mean = aux.inter_observation_duration_sum.read_value() / tf.cast(
                aux.chunk_count.read_value(), dtype
            )
            span = tf.cast(max_time - start_time + 1, dtype)
            total = statistics.total_observation_count.assign(
                tf.cast(tf.round(span / spacing_mean), tf.int64)
            )
            return tf.group(moments, series_start, start_time, total)
