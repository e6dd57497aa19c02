"""Canned estimators, heads and optimizers over feature columns (tf.estimator 2.15)."""

from keras_estimator.canned.add_metrics import add_metrics
from keras_estimator.canned.baseline import (
    BaselineClassifier,
    BaselineEstimator,
    BaselineRegressor,
)
from keras_estimator.canned.boosted_trees import (
    BoostedTreesClassifier,
    BoostedTreesEstimator,
    BoostedTreesRegressor,
)
from keras_estimator.canned.dnn import DNNClassifier, DNNEstimator, DNNRegressor
from keras_estimator.canned.dnn_linear_combined import (
    DNNLinearCombinedClassifier,
    DNNLinearCombinedEstimator,
    DNNLinearCombinedRegressor,
)
from keras_estimator.canned.linear import LinearClassifier, LinearEstimator, LinearRegressor
from keras_estimator.canned.parsing_specs import (
    classifier_parse_example_spec,
    regressor_parse_example_spec,
)

__all__ = [
    "BaselineClassifier",
    "BaselineEstimator",
    "BaselineRegressor",
    "BoostedTreesClassifier",
    "BoostedTreesEstimator",
    "BoostedTreesRegressor",
    "DNNClassifier",
    "DNNEstimator",
    "DNNLinearCombinedEstimator",
    "LinearEstimator",
    "DNNLinearCombinedClassifier",
    "DNNLinearCombinedRegressor",
    "DNNRegressor",
    "LinearClassifier",
    "LinearRegressor",
    "add_metrics",
    "classifier_parse_example_spec",
    "regressor_parse_example_spec",
]
