"""LinearClassifier and LinearRegressor: one weight per feature value, Ftrl by default."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import tensorflow as tf

from keras_estimator.canned import canned_model_fn, feature_inputs, linear_sdca, optimizers
from keras_estimator.canned.linear_sdca import LinearSDCA
from keras_estimator.estimator.estimator import Estimator
from keras_estimator.spec.run_config import RunConfig

_LEARNING_RATE = 0.2  # tf.estimator 2.15's learning rate for a named optimizer


def linear_logits(features: dict, columns: list, units: int, sparse_combiner: str):
    """The linear model under variable scope `linear` (tf.estimator's variable names)."""
    with tf.compat.v1.variable_scope("linear"):
        return feature_inputs.linear_logits(features, columns, units, sparse_combiner)


def linear_logit_fn_builder(
    units: int, feature_columns: list, sparse_combiner: str = "sum"
) -> Callable[[dict], tf.Tensor]:
    """A `logit_fn(features)` building the canned linear model, as tf.estimator 2.15's
    `tf.compat.v1.estimator.experimental.linear_logit_fn_builder`.

    The variables are created in the caller's variable scope with the canned names
    (`linear_model/<column>/weights`, `linear_model/bias_weights`); LinearClassifier calls
    it under `linear`.

    Example:
        >>> logit_fn = linear_logit_fn_builder(1, [tf.feature_column.numeric_column("x")])
        >>> def model_fn(features, labels, mode):
        ...     with tf.compat.v1.variable_scope("linear"):
        ...         logits = logit_fn(features=features)
    """
    columns = feature_inputs.check_feature_columns(feature_columns)

    def linear_logit_fn(features: dict) -> tf.Tensor:
        return feature_inputs.linear_logits(features, columns, units, sparse_combiner)

    return linear_logit_fn


class _LinearEstimator(Estimator):
    def __init__(self, head, feature_columns, model_dir, optimizer, config, warm_start_from,
                 sparse_combiner) -> None:  # fmt: skip
        columns = feature_inputs.check_feature_columns(feature_columns)
        self._head = head
        if isinstance(optimizer, LinearSDCA):
            sdca_model_fn = linear_sdca.model_fn(
                head, columns, optimizer, sparse_combiner, lambda name: f"{name}_unshrunk",
                lambda features: linear_logits(features, columns, 1, "sum"),
            )  # fmt: skip
            super().__init__(sdca_model_fn, model_dir, config, warm_start_from=warm_start_from)
            return
        canned_model_fn.check_optimizer(optimizer)
        if not optimizer:  # tf.estimator's default: Ftrl at min(0.2, 1 / sqrt(columns))
            rate = optimizers.linear_learning_rate(len(columns))

            def optimizer() -> optimizers.Ftrl:
                return optimizers.Ftrl(rate)

        def model_fn(features, labels, mode):
            logits = linear_logits(features, columns, head.logits_dimension, sparse_combiner)
            return canned_model_fn.spec_with_optimizers(
                head, features, mode, logits, labels,
                [(optimizer, _LEARNING_RATE, "linear", False)],
            )  # fmt: skip

        super().__init__(model_fn, model_dir, config, warm_start_from=warm_start_from)


class LinearClassifier(_LinearEstimator):
    """A linear classifier over feature columns, as `tf.estimator.LinearClassifier`.

    Variables are `linear/linear_model/<column>/weights` and `linear/linear_model/
    bias_weights`, with Ftrl's slots under `training/Ftrl/`.

    Example:
        >>> est = LinearClassifier(feature_columns=[tf.feature_column.numeric_column("x")])
        >>> est.train(input_fn, steps=100)
    """

    def __init__(
        self,
        feature_columns: list,
        model_dir: str | os.PathLike | None = None,
        n_classes: int = 2,
        weight_column: Any = None,
        label_vocabulary: list[str] | None = None,
        optimizer: Any = "Ftrl",
        config: RunConfig | None = None,
        warm_start_from: Any = None,
        loss_reduction: Any = "sum_over_batch_size",
        sparse_combiner: str = "sum",
    ) -> None:
        head = canned_model_fn.classification_head(n_classes, weight_column, label_vocabulary,
                                                   loss_reduction)  # fmt: skip
        super().__init__(head, feature_columns, model_dir, optimizer, config, warm_start_from,
                         sparse_combiner)  # fmt: skip


class LinearRegressor(_LinearEstimator):
    """A linear regressor over feature columns, as `tf.estimator.LinearRegressor`.

    Example:
        >>> est = LinearRegressor(feature_columns=columns, label_dimension=1)
    """

    def __init__(
        self,
        feature_columns: list,
        model_dir: str | os.PathLike | None = None,
        label_dimension: int = 1,
        weight_column: Any = None,
        optimizer: Any = "Ftrl",
        config: RunConfig | None = None,
        warm_start_from: Any = None,
        loss_reduction: Any = "sum_over_batch_size",
        sparse_combiner: str = "sum",
    ) -> None:
        head = canned_model_fn.regression_head(label_dimension, weight_column, loss_reduction)
        super().__init__(head, feature_columns, model_dir, optimizer, config, warm_start_from,
                         sparse_combiner)  # fmt: skip


class LinearEstimator(_LinearEstimator):
    """A linear model trained through any head, as `tf.estimator.LinearEstimator`.

    Example:
        >>> est = LinearEstimator(head=PoissonRegressionHead(), feature_columns=columns)
    """

    def __init__(
        self,
        head: Any,
        feature_columns: list,
        model_dir: str | os.PathLike | None = None,
        optimizer: Any = "Ftrl",
        config: RunConfig | None = None,
        warm_start_from: Any = None,
        sparse_combiner: str = "sum",
    ) -> None:
        super().__init__(head, feature_columns, model_dir, optimizer, config, warm_start_from,
                         sparse_combiner)  # fmt: skip
