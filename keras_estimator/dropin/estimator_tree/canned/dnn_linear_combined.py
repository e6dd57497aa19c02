"""2.15's `canned/dnn_linear_combined.py`. The plain names are the v1 estimators, the `V2`
names `tf.estimator`'s."""

from keras_estimator.canned.dnn_linear_combined import (
    DNNLinearCombinedClassifier as DNNLinearCombinedClassifierV2,
)
from keras_estimator.canned.dnn_linear_combined import (
    DNNLinearCombinedEstimator as DNNLinearCombinedEstimatorV2,
)
from keras_estimator.canned.dnn_linear_combined import (
    DNNLinearCombinedRegressor as DNNLinearCombinedRegressorV2,
)
from keras_estimator.canned.v1.dnn_linear_combined import (
    DNNLinearCombinedClassifier,
    DNNLinearCombinedEstimator,
    DNNLinearCombinedRegressor,
)
from keras_estimator.canned.v1.dnn_linear_combined import (
    _check_no_sync_replicas as _check_no_sync_replicas_optimizer,
)

__all__ = [
    "_check_no_sync_replicas_optimizer",
    "DNNLinearCombinedClassifier",
    "DNNLinearCombinedClassifierV2",
    "DNNLinearCombinedEstimator",
    "DNNLinearCombinedEstimatorV2",
    "DNNLinearCombinedRegressor",
    "DNNLinearCombinedRegressorV2",
]


def _linear_learning_rate(num_linear_feature_columns: int) -> float:
    """2.15's default linear learning rate: min(0.005, 1 / sqrt(number of columns))."""
    return min(0.005, 1.0 / num_linear_feature_columns**0.5)
