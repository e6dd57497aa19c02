"""tf.estimator 2.15's time-series estimators, rebuilt on keras_estimator's Estimator.

`TimeSeriesRegressor` fits a `TimeSeriesModel` (such as the autoregressive `ARModel`),
`LSTMAutoRegressor` is the ready-made LSTM one. Features are `times` ([batch, window]
integers) and `values` ([batch, window, num_features]); evaluation returns in-sample
predictions and the model state to continue from; prediction takes `times` and that state.
The modules mirror 2.15's `tensorflow_estimator.python.estimator.canned.timeseries`.
"""

from keras_estimator.canned.timeseries.ar_model import ARModel, LSTMPredictionModel
from keras_estimator.canned.timeseries.estimators import LSTMAutoRegressor, TimeSeriesRegressor
from keras_estimator.canned.timeseries.head import OneShotPredictionHead, TimeSeriesRegressionHead
from keras_estimator.canned.timeseries.model import ModelOutputs, TimeSeriesModel

__all__ = [
    "ARModel",
    "LSTMAutoRegressor",
    "LSTMPredictionModel",
    "ModelOutputs",
    "OneShotPredictionHead",
    "TimeSeriesModel",
    "TimeSeriesRegressionHead",
    "TimeSeriesRegressor",
]
