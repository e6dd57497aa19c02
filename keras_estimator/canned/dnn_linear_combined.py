"""DNNLinearCombinedClassifier / Regressor: wide (linear) and deep (DNN) logits, summed."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import tensorflow as tf

from keras_estimator.canned import canned_model_fn, feature_inputs, optimizers
from keras_estimator.canned.dnn import _check_dropout, _check_hidden_units, dnn_logits
from keras_estimator.canned.linear import linear_logits
from keras_estimator.estimator.estimator import Estimator
from keras_estimator.spec.estimator_spec import EstimatorSpec
from keras_estimator.spec.run_config import RunConfig

_DNN_LEARNING_RATE = 0.001
_LINEAR_LEARNING_RATE_CAP = 0.005


def check_combined_args(
    linear_feature_columns: Any, dnn_feature_columns: Any, dnn_hidden_units: Any, dnn_dropout: Any
) -> tuple[list | None, list | None, Any, float | None]:
    """The wide-and-deep arguments, checked as tf.estimator 2.15 did (v2 and v1 classes).

    Returns `(linear_columns, dnn_columns, dnn_hidden_units, dnn_dropout)`; a part without
    columns is `None`.
    """
    if not linear_feature_columns and not dnn_feature_columns:
        raise ValueError("Either linear_feature_columns or dnn_feature_columns must be defined.")
    linear_columns = dnn_columns = None
    if linear_feature_columns:
        linear_columns = feature_inputs.check_feature_columns(
            linear_feature_columns, "linear_feature_columns"
        )
    if dnn_feature_columns:
        if not dnn_hidden_units:
            raise ValueError(
                "dnn_hidden_units must be defined when dnn_feature_columns is specified."
            )
        dnn_columns = feature_inputs.check_feature_columns(
            dnn_feature_columns, "dnn_feature_columns"
        )
        dnn_hidden_units = _check_hidden_units(dnn_hidden_units)
    dnn_dropout = _check_dropout(dnn_dropout)
    return linear_columns, dnn_columns, dnn_hidden_units, dnn_dropout


class _CombinedEstimator(Estimator):
    def __init__(self, head, model_dir, linear_feature_columns, linear_optimizer,
                 dnn_feature_columns, dnn_optimizer, dnn_hidden_units, dnn_activation_fn,
                 dnn_dropout, config, warm_start_from, batch_norm,
                 linear_sparse_combiner) -> None:  # fmt: skip
        linear_columns, dnn_columns, dnn_hidden_units, dnn_dropout = check_combined_args(
            linear_feature_columns, dnn_feature_columns, dnn_hidden_units, dnn_dropout
        )
        canned_model_fn.check_optimizer(linear_optimizer)
        canned_model_fn.check_optimizer(dnn_optimizer)
        self._head = head
        linear_rate = optimizers.linear_learning_rate(
            len(linear_columns or []), _LINEAR_LEARNING_RATE_CAP
        )

        def model_fn(features: dict, labels: Any, mode: str) -> EstimatorSpec:
            logits = None
            # (optimizer, default learning rate, variable scope, own iterations)
            parts: list[tuple[Any, float | None, str, bool]] = []
            if dnn_columns:
                logits = dnn_logits(
                    features,
                    mode,
                    head.logits_dimension,
                    dnn_hidden_units,
                    dnn_columns,
                    dnn_activation_fn,
                    dnn_dropout,
                    batch_norm,
                )
                parts.append((dnn_optimizer, _DNN_LEARNING_RATE, "dnn", False))
            if linear_columns:
                linear = linear_logits(features, linear_columns, head.logits_dimension,
                                       linear_sparse_combiner)  # fmt: skip
                logits = linear if logits is None else logits + linear
                # Only one optimizer counts the global step; the other keeps its own `iter`.
                parts.append((linear_optimizer, linear_rate, "linear", bool(dnn_columns)))
            return canned_model_fn.spec_with_optimizers(head, features, mode, logits, labels,
                                                        parts)  # fmt: skip

        super().__init__(model_fn, model_dir, config, warm_start_from=warm_start_from)


class DNNLinearCombinedClassifier(_CombinedEstimator):
    """A wide-and-deep classifier, as `tf.estimator.DNNLinearCombinedClassifier`.

    Example:
        >>> est = DNNLinearCombinedClassifier(
        ...     linear_feature_columns=[crossed], dnn_feature_columns=[embedded, age],
        ...     dnn_hidden_units=[32, 16])
    """

    def __init__(
        self,
        model_dir: str | os.PathLike | None = None,
        linear_feature_columns: list | None = None,
        linear_optimizer: Any = "Ftrl",
        dnn_feature_columns: list | None = None,
        dnn_optimizer: Any = "Adagrad",
        dnn_hidden_units: list[int] | None = None,
        dnn_activation_fn: Callable = tf.nn.relu,
        dnn_dropout: float | None = None,
        n_classes: int = 2,
        weight_column: Any = None,
        label_vocabulary: list[str] | None = None,
        config: RunConfig | None = None,
        warm_start_from: Any = None,
        loss_reduction: Any = "sum_over_batch_size",
        batch_norm: bool = False,
        linear_sparse_combiner: str = "sum",
    ) -> None:
        head = canned_model_fn.classification_head(n_classes, weight_column, label_vocabulary,
                                                   loss_reduction)  # fmt: skip
        super().__init__(head, model_dir, linear_feature_columns, linear_optimizer,
                         dnn_feature_columns, dnn_optimizer, dnn_hidden_units, dnn_activation_fn,
                         dnn_dropout, config, warm_start_from, batch_norm,
                         linear_sparse_combiner)  # fmt: skip


class DNNLinearCombinedRegressor(_CombinedEstimator):
    """A wide-and-deep regressor, as `tf.estimator.DNNLinearCombinedRegressor`.

    Example:
        >>> est = DNNLinearCombinedRegressor(linear_feature_columns=[x],
        ...                                  dnn_feature_columns=[x], dnn_hidden_units=[8])
    """

    def __init__(
        self,
        model_dir: str | os.PathLike | None = None,
        linear_feature_columns: list | None = None,
        linear_optimizer: Any = "Ftrl",
        dnn_feature_columns: list | None = None,
        dnn_optimizer: Any = "Adagrad",
        dnn_hidden_units: list[int] | None = None,
        dnn_activation_fn: Callable = tf.nn.relu,
        dnn_dropout: float | None = None,
        label_dimension: int = 1,
        weight_column: Any = None,
        config: RunConfig | None = None,
        warm_start_from: Any = None,
        loss_reduction: Any = "sum_over_batch_size",
        batch_norm: bool = False,
        linear_sparse_combiner: str = "sum",
    ) -> None:
        head = canned_model_fn.regression_head(label_dimension, weight_column, loss_reduction)
        super().__init__(head, model_dir, linear_feature_columns, linear_optimizer,
                         dnn_feature_columns, dnn_optimizer, dnn_hidden_units, dnn_activation_fn,
                         dnn_dropout, config, warm_start_from, batch_norm,
                         linear_sparse_combiner)  # fmt: skip


class DNNLinearCombinedEstimator(_CombinedEstimator):
    """Wide and deep logits trained through any head (`tf.estimator.DNNLinearCombinedEstimator`).

    Example:
        >>> est = DNNLinearCombinedEstimator(head=MultiLabelHead(3), linear_feature_columns=[a],
        ...                                  dnn_feature_columns=[b], dnn_hidden_units=[8])
    """

    def __init__(
        self,
        head: Any,
        model_dir: str | os.PathLike | None = None,
        linear_feature_columns: list | None = None,
        linear_optimizer: Any = "Ftrl",
        dnn_feature_columns: list | None = None,
        dnn_optimizer: Any = "Adagrad",
        dnn_hidden_units: list[int] | None = None,
        dnn_activation_fn: Callable = tf.nn.relu,
        dnn_dropout: float | None = None,
        config: RunConfig | None = None,
        batch_norm: bool = False,
        linear_sparse_combiner: str = "sum",
        warm_start_from: Any = None,
    ) -> None:
        super().__init__(head, model_dir, linear_feature_columns, linear_optimizer,
                         dnn_feature_columns, dnn_optimizer, dnn_hidden_units, dnn_activation_fn,
                         dnn_dropout, config, warm_start_from, batch_norm,
                         linear_sparse_combiner)  # fmt: skip
