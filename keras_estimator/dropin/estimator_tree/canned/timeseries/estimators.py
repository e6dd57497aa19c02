"""2.15's `canned/timeseries/estimators.py`: `TimeSeriesRegressor` and
`LSTMAutoRegressor`, Estimators on keras_estimator's engine; their serving input receivers
(`build_raw_serving_input_receiver_fn`, `build_one_shot_parsing_serving_input_receiver_fn`)
export SavedModels that `saved_model_utils` filters and predicts with."""

from keras_estimator.canned.timeseries.estimators import LSTMAutoRegressor, TimeSeriesRegressor

__all__ = ["LSTMAutoRegressor", "TimeSeriesRegressor"]
