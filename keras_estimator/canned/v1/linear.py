"""tf.compat.v1.estimator's LinearClassifier / LinearRegressor / LinearEstimator (2.15).

Variables as the v2 classes name them (`linear/linear_model/<column>/weights`,
`linear/linear_model/bias_weights`, through `tf.compat.v1.feature_column.linear_model`);
the loss is summed over the batch and a `tf.compat.v1.train.FtrlOptimizer` (learning rate
0.2 for the name `'Ftrl'`) trains them, its slots named as 2.15 saved them
(`linear/linear_model/<column>/weights/part_0/Ftrl`, `.../part_0/Ftrl_1`).
"""

from __future__ import annotations

import os
from typing import Any

import tensorflow as tf

from keras_estimator.canned import feature_inputs, linear_sdca
from keras_estimator.canned.linear_sdca import LinearSDCA
from keras_estimator.canned.optimizers import linear_learning_rate
from keras_estimator.canned.v1 import heads, optimizers, slot_names
from keras_estimator.canned.v1.dnn import check_features
from keras_estimator.estimator.estimator_v1 import Estimator
from keras_estimator.spec.run_config import RunConfig

_V1 = tf.compat.v1
_LEARNING_RATE = 0.2  # tf.estimator 2.15's rate for a named optimizer


def _sdca_model_fn(head: Any, columns: list, optimizer: LinearSDCA, sparse_combiner: str):  # noqa: ANN202
    """The model_fn of a linear model trained by SDCA, all under variable scope `linear`;
    2.15's v1 estimators named the unshrunk weights `linear/<weights>/part_0_unshrunk` (a
    partitioned variable's part)."""
    sdca_model_fn = linear_sdca.model_fn(
        head, columns, optimizer, sparse_combiner,
        lambda name: f"linear/{name}/part_0_unshrunk",
        lambda features: feature_inputs.linear_logits(features, columns, 1, "sum"),
    )  # fmt: skip

    def model_fn(features, labels, mode):
        check_features(features)
        with _V1.variable_scope("linear"):
            return sdca_model_fn(features, labels, mode)

    return model_fn


class _LinearEstimatorV1(Estimator):
    def __init__(self, head, feature_columns, model_dir, optimizer, config, partitioner,
                 warm_start_from, sparse_combiner) -> None:  # fmt: skip
        del partitioner  # keras_estimator's variables are never partitioned
        columns = feature_inputs.check_feature_columns(feature_columns)
        self._head = head
        if isinstance(optimizer, LinearSDCA):
            sdca_model_fn = _sdca_model_fn(head, columns, optimizer, sparse_combiner)
            super().__init__(sdca_model_fn, model_dir, config, warm_start_from=warm_start_from)
            return
        optimizers.check_optimizer_name(optimizer)

        def model_fn(features, labels, mode):
            check_features(features)
            with _V1.variable_scope("linear"):
                logits = feature_inputs.linear_logits(features, columns, head.logits_dimension,
                                                      sparse_combiner)  # fmt: skip
                # 2.15: a given optimizer at 0.2; none at min(0.2, 1 / sqrt(columns)).
                resolved = optimizers.get_optimizer_instance(
                    optimizer or _V1.train.FtrlOptimizer(linear_learning_rate(len(columns))),
                    _LEARNING_RATE,
                )
                return slot_names.spec_with_v1_slot_names(
                    head, features, mode, logits, labels, partitioned=True, optimizer=resolved
                )

        super().__init__(model_fn, model_dir, config, warm_start_from=warm_start_from)


class LinearClassifier(_LinearEstimatorV1):
    """`tf.compat.v1.estimator.LinearClassifier`: loss summed over the batch, Ftrl (v1).

    Example:
        >>> from keras_estimator import v1 as estimator
        >>> est = estimator.LinearClassifier([tf.feature_column.numeric_column("x")])
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
        partitioner: Any = None,
        warm_start_from: Any = None,
        loss_reduction: str = heads.SUM,
        sparse_combiner: str = "sum",
    ) -> None:
        head = heads.classification_head(n_classes, weight_column, label_vocabulary,
                                         loss_reduction)  # fmt: skip
        super().__init__(head, feature_columns, model_dir, optimizer, config, partitioner,
                         warm_start_from, sparse_combiner)  # fmt: skip


class LinearRegressor(_LinearEstimatorV1):
    """`tf.compat.v1.estimator.LinearRegressor`: squared error summed over the batch.

    Example:
        >>> est = estimator.LinearRegressor(columns, label_dimension=1)
    """

    def __init__(
        self,
        feature_columns: list,
        model_dir: str | os.PathLike | None = None,
        label_dimension: int = 1,
        weight_column: Any = None,
        optimizer: Any = "Ftrl",
        config: RunConfig | None = None,
        partitioner: Any = None,
        warm_start_from: Any = None,
        loss_reduction: str = heads.SUM,
        sparse_combiner: str = "sum",
    ) -> None:
        head = heads.regression_head(label_dimension, weight_column, loss_reduction)
        super().__init__(head, feature_columns, model_dir, optimizer, config, partitioner,
                         warm_start_from, sparse_combiner)  # fmt: skip


class LinearEstimator(_LinearEstimatorV1):
    """`tf.compat.v1.estimator.LinearEstimator`: the v1 linear model through a given head.

    Example:
        >>> est = estimator.LinearEstimator(head, feature_columns=columns)
    """

    def __init__(
        self,
        head: Any,
        feature_columns: list,
        model_dir: str | os.PathLike | None = None,
        optimizer: Any = "Ftrl",
        config: RunConfig | None = None,
        partitioner: Any = None,
        sparse_combiner: str = "sum",
        warm_start_from: Any = None,
    ) -> None:
        super().__init__(head, feature_columns, model_dir, optimizer, config, partitioner,
                         warm_start_from, sparse_combiner)  # fmt: skip
