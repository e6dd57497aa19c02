"""`tf.estimator.experimental` (and `tf.compat.v1.estimator.experimental`): early stopping
and related hooks, the logit_fn helpers, the raw supervised receiver, KMeans, the RNN
estimators and LinearSDCA, the SDCA optimizer of the linear estimators."""

from keras_estimator.canned.dnn import dnn_logit_fn_builder
from keras_estimator.canned.linear import linear_logit_fn_builder
from keras_estimator.canned.linear_sdca import LinearSDCA
from keras_estimator.canned.rnn import RNNClassifier, RNNEstimator
from keras_estimator.canned.v1.kmeans import KMeansClustering as KMeans
from keras_estimator.experimental.early_stopping import (
    make_early_stopping_hook,
    read_eval_metrics,
    stop_if_higher_hook,
    stop_if_lower_hook,
    stop_if_no_decrease_hook,
    stop_if_no_increase_hook,
)
from keras_estimator.experimental.in_memory_evaluator import InMemoryEvaluatorHook
from keras_estimator.experimental.logit_fn import call_logit_fn
from keras_estimator.experimental.stop_at_checkpoint_step import (
    make_stop_at_checkpoint_step_hook,
)
from keras_estimator.export.receivers import build_raw_supervised_input_receiver_fn

__all__ = [
    "InMemoryEvaluatorHook",
    "KMeans",
    "LinearSDCA",
    "RNNClassifier",
    "RNNEstimator",
    "build_raw_supervised_input_receiver_fn",
    "call_logit_fn",
    "dnn_logit_fn_builder",
    "linear_logit_fn_builder",
    "make_early_stopping_hook",
    "make_stop_at_checkpoint_step_hook",
    "read_eval_metrics",
    "stop_if_higher_hook",
    "stop_if_lower_hook",
    "stop_if_no_decrease_hook",
    "stop_if_no_increase_hook",
]
