"""2.15's `canned/timeseries/math_utils.py`: input statistics (running moments of the series
in `input_statistics/...` variables) and `replicate_state`."""

from keras_estimator.canned.timeseries.math_utils import (
    InputStatistics,
    InputStatisticsFromMiniBatch,
    Moments,
    replicate_state,
)

__all__ = ["InputStatistics", "InputStatisticsFromMiniBatch", "Moments", "replicate_state"]
