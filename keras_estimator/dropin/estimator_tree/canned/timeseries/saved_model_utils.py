"""2.15's `canned/timeseries/saved_model_utils.py`: filtering and predicting with an
exported time-series SavedModel in a TF1 session (`tf.compat.v1.saved_model.loader.load`).

A SavedModel written by TensorFlow 2 has no input defaults: `predict_continuation` feeds
zeros for `values` itself (2.15's receiver defaulted them).
"""

from keras_estimator.canned.timeseries.saved_model_utils import (
    _canonicalize_numpy_data,
    _colate_features_to_feeds_and_fetches,
    cold_start_filter,
    filter_continuation,
    predict_continuation,
)

__all__ = [
    "_canonicalize_numpy_data",
    "_colate_features_to_feeds_and_fetches",
    "cold_start_filter",
    "filter_continuation",
    "predict_continuation",
]
