"""2.15's `head/regression_head`: the regression heads of `tf.estimator`."""

from keras_estimator.canned.heads.regression_head import (
    LogisticRegressionHead,
    PoissonRegressionHead,
    RegressionHead,
)

__all__ = ["LogisticRegressionHead", "PoissonRegressionHead", "RegressionHead"]
