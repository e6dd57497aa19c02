"""Heads: logits -> predictions, loss, metrics and an EstimatorSpec (tf.estimator 2.x)."""

from keras_estimator.canned.heads.base_head import Head
from keras_estimator.canned.heads.binary_class_head import BinaryClassHead
from keras_estimator.canned.heads.multi_class_head import MultiClassHead
from keras_estimator.canned.heads.multi_head import MultiHead
from keras_estimator.canned.heads.multi_label_head import MultiLabelHead
from keras_estimator.canned.heads.regression_head import (
    LogisticRegressionHead,
    PoissonRegressionHead,
    RegressionHead,
)
from keras_estimator.canned.heads.sequential_head import SequentialHeadWrapper

__all__ = [
    "BinaryClassHead",
    "Head",
    "LogisticRegressionHead",
    "MultiClassHead",
    "MultiHead",
    "MultiLabelHead",
    "PoissonRegressionHead",
    "RegressionHead",
    "SequentialHeadWrapper",
]
