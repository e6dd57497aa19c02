"""Canned estimators, heads and optimizers over feature columns (tf.estimator 2.15)."""

from keras_estimator.canned.add_metrics import add_metrics
from keras_estimator.canned.baseline import BaselineClassifier, BaselineRegressor
from keras_estimator.canned.dnn import DNNClassifier, DNNRegressor
from keras_estimator.canned.dnn_linear_combined import (
    DNNLinearCombinedClassifier,
    DNNLinearCombinedRegressor,
)
from keras_estimator.canned.linear import LinearClassifier, LinearRegressor
from keras_estimator.canned.parsing_specs import (
    classifier_parse_example_spec,
    regressor_parse_example_spec,
)

__all__ = [
    "BaselineClassifier",
    "BaselineRegressor",
    "DNNClassifier",
    "DNNLinearCombinedClassifier",
    "DNNLinearCombinedRegressor",
    "DNNRegressor",
    "LinearClassifier",
    "LinearRegressor",
    "add_metrics",
    "classifier_parse_example_spec",
    "regressor_parse_example_spec",
]
