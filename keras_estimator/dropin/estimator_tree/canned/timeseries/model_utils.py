"""2.15's `canned/timeseries/model_utils.py`: a `get_variable` dense layer and the
prediction times after a previous output."""

from keras_estimator.canned.timeseries.model_utils import (
    canonicalize_times_or_steps_from_output,
    fully_connected,
)

__all__ = ["canonicalize_times_or_steps_from_output", "fully_connected"]
