"""The v1 canned estimators of tf.estimator 2.15 (`tf.compat.v1.estimator.DNNClassifier`,
...): loss summed over the batch, `tf.compat.v1.train` optimizers, 2.15's v1 slot names.
Public through `keras_estimator.v1` (and `tf.compat.v1.estimator` after `install()`)."""

from keras_estimator.canned.v1.baseline import (
    BaselineClassifier,
    BaselineEstimator,
    BaselineRegressor,
)
from keras_estimator.canned.v1.dnn import DNNClassifier, DNNEstimator, DNNRegressor
from keras_estimator.canned.v1.dnn_linear_combined import (
    DNNLinearCombinedClassifier,
    DNNLinearCombinedEstimator,
    DNNLinearCombinedRegressor,
)
from keras_estimator.canned.v1.linear import LinearClassifier, LinearEstimator, LinearRegressor
from keras_estimator.canned.v1.parsing_specs import (
    classifier_parse_example_spec,
    regressor_parse_example_spec,
)

__all__ = [
    "BaselineClassifier",
    "BaselineEstimator",
    "BaselineRegressor",
    "DNNClassifier",
    "DNNEstimator",
    "DNNLinearCombinedClassifier",
    "DNNLinearCombinedEstimator",
    "DNNLinearCombinedRegressor",
    "DNNRegressor",
    "LinearClassifier",
    "LinearEstimator",
    "LinearRegressor",
    "classifier_parse_example_spec",
    "regressor_parse_example_spec",
]
