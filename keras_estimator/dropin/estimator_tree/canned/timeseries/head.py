"""2.15's `canned/timeseries/head.py`: the time-series heads (model_fns around a
`TimeSeriesModel`) and their helpers.

`_identity_metric_single` returns `(tensor, no_op)`: keras_estimator reports a metric value
of the last evaluated batch as it is, where 2.15 kept it in a local variable.
"""

from keras_estimator.canned.timeseries.head import (
    OneShotPredictionHead,
    TimeSeriesRegressionHead,
    _check_feature_shapes_compatible_with,
    _check_train_eval_features,
    _identity_metric_nested,
    _identity_metric_single,
    _NoStatePredictOutput,
    state_to_dictionary,
)

__all__ = [
    "OneShotPredictionHead",
    "TimeSeriesRegressionHead",
    "_NoStatePredictOutput",
    "_check_feature_shapes_compatible_with",
    "_check_train_eval_features",
    "_identity_metric_nested",
    "_identity_metric_single",
    "state_to_dictionary",
]
