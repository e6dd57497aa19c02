"""2.15's `canned/linear.py`. The plain names are the v1 estimators, the `V2` names
`tf.estimator`'s.

Unavailable here (they raise `UnavailableError` when made): `LinearModel` and
`_LinearModelLayer`, 2.15's tf.keras 2 linear model over feature columns, built on Keras
2's layer internals that Keras 3 does not have. Use `LinearClassifier` /
`LinearRegressor`, or `linear_logit_fn_builder` in a model_fn.
"""

from __future__ import annotations

from typing import Any

import tensorflow as tf

from keras_estimator.canned.linear import LinearClassifier as LinearClassifierV2
from keras_estimator.canned.linear import LinearEstimator as LinearEstimatorV2
from keras_estimator.canned.linear import LinearRegressor as LinearRegressorV2
from keras_estimator.canned.linear import linear_logit_fn_builder
from keras_estimator.canned.linear_sdca import LinearSDCA
from keras_estimator.canned.v1.linear import (
    LinearClassifier,
    LinearEstimator,
    LinearRegressor,
    _sdca_model_fn,
)
from keras_estimator.dropin.unavailable import unavailable_class

__all__ = [
    "LinearClassifier",
    "LinearClassifierV2",
    "LinearEstimator",
    "LinearEstimatorV2",
    "LinearModel",
    "LinearRegressor",
    "LinearRegressorV2",
    "LinearSDCA",
    "linear_logit_fn_builder",
    "linear_logit_fn_builder_v2",
    "_sdca_model_fn",
]

_KERAS2 = "it is a tf.keras 2 model over feature columns, built on Keras 2 layer internals"
_INSTEAD = (
    "train with keras_estimator's LinearClassifier / LinearRegressor, or call "
    "linear_logit_fn_builder(units, feature_columns)(features) in a model_fn"
)
LinearModel = unavailable_class("canned.linear.LinearModel", _KERAS2, _INSTEAD)
_LinearModelLayer = unavailable_class("canned.linear._LinearModelLayer", _KERAS2, _INSTEAD)


def linear_logit_fn_builder_v2(units: int, feature_columns: list, sparse_combiner: str = "sum"):
    """2.15's v2 `linear_logit_fn_builder`: the same linear model."""
    return linear_logit_fn_builder(units, feature_columns, sparse_combiner)


def _compute_fraction_of_zero(variables: list) -> tf.Tensor:
    """The fraction of zero entries over all of `variables`."""
    if not variables:
        return tf.constant(0.0)
    sizes = [tf.cast(tf.size(v), tf.float32) for v in variables]
    zeros = [tf.math.zero_fraction(v) * s for v, s in zip(variables, sizes)]
    return tf.add_n(zeros) / tf.add_n(sizes)


def _get_default_optimizer(feature_columns: Any) -> Any:
    from keras_estimator.canned.optimizers import linear_learning_rate

    rate = linear_learning_rate(len(feature_columns))
    return tf.compat.v1.train.FtrlOptimizer(learning_rate=rate)


def _get_default_optimizer_v2(feature_columns: Any) -> Any:
    import keras

    from keras_estimator.canned.optimizers import linear_learning_rate

    return keras.optimizers.Ftrl(learning_rate=linear_learning_rate(len(feature_columns)))


class _SDCAUpdateWeightsHook(tf.compat.v1.train.SessionRunHook):
    """Runs an `_SDCAModel`'s weight update with every training step, as 2.15's
    `LinearSDCA` training did (the model's `minimize` op is the step's train op)."""

    def __init__(self, sdca_model: Any, train_op: Any) -> None:
        self._sdca_model = sdca_model
        self._train_op = train_op

    def begin(self) -> None:
        self._update_op = self._sdca_model.update_weights(self._train_op)

    def before_run(self, run_context: Any) -> Any:
        return tf.compat.v1.train.SessionRunArgs(self._update_op)
