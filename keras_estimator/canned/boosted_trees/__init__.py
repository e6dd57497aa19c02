"""Gradient-boosted trees estimators (tf.estimator 2.8's BoostedTrees*), in plain TF ops."""

from keras_estimator.canned.boosted_trees.estimators import (
    BoostedTreesClassifier,
    BoostedTreesEstimator,
    BoostedTreesRegressor,
)

__all__ = ["BoostedTreesClassifier", "BoostedTreesEstimator", "BoostedTreesRegressor"]
