"""2.15's `canned/timeseries/feature_keys.py`: the feature and result names of time-series
models (`times`, `values`, `start_tuple`, `model_state_NN`, the signature names)."""

from keras_estimator.canned.timeseries.feature_keys import (
    FilteringFeatures,
    FilteringResults,
    PredictionFeatures,
    PredictionResults,
    SavedModelLabels,
    State,
    Times,
    TrainEvalFeatures,
    Values,
)

__all__ = [
    "FilteringFeatures",
    "FilteringResults",
    "PredictionFeatures",
    "PredictionResults",
    "SavedModelLabels",
    "State",
    "Times",
    "TrainEvalFeatures",
    "Values",
]
