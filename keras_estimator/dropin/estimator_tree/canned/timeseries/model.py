"""2.15's `canned/timeseries/model.py`: `TimeSeriesModel`, the base of time-series models,
and `ModelOutputs`."""

from keras_estimator.canned.timeseries.model import ModelOutputs, TimeSeriesModel

__all__ = ["ModelOutputs", "TimeSeriesModel"]
