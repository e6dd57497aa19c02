"""The feature and result names time-series models read and return (tf.estimator 2.15's)."""

from __future__ import annotations

import tensorflow as tf


class State:
    """Keys for model state: a nested tuple, or its flattened parts in a SavedModel."""

    STATE_TUPLE = "start_tuple"
    STATE_PREFIX = "model_state"


class Times:
    """The key of the increasing integer times of a window."""

    TIMES = "times"


class Values:
    """The key of the observed values, one or more per time."""

    VALUES = "values"


class TrainEvalFeatures(Times, Values):
    """Features of training and evaluation: `times` and `values`."""


class PredictionFeatures(Times, State):
    """Features of prediction: `times` and the state to continue from."""


class FilteringFeatures(Times, Values, State):
    """Features of filtering (updating state with new observations)."""


class PredictionResults(Times):
    """Keys of prediction results (besides the model's own, such as `mean`)."""


class FilteringResults(Times, State):
    """Keys of evaluation / filtering results."""


class SavedModelLabels:
    """Signature names of a time-series SavedModel."""

    PREDICT = tf.saved_model.DEFAULT_SERVING_SIGNATURE_DEF_KEY
    FILTER = "filter"
    COLD_START_FILTER = "cold_start_filter"
