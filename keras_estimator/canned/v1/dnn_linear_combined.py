"""tf.compat.v1.estimator's DNNLinearCombinedClassifier / Regressor / Estimator (2.15).

The wide (`linear/...`) and deep (`dnn/...`) parts as the v2 classes name them, the loss
summed over the batch; each part has its own `tf.compat.v1.train` optimizer (Ftrl at
min(0.005, 1 / sqrt(linear columns)) and Adagrad at 0.001 for the names), and the global
step moves once per step after both. Slots are named as 2.15 saved them
(`dnn/logits/bias/Adagrad`, `linear/linear_model/x/weights/Ftrl`, `.../Ftrl_1`).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from typing import Any

import tensorflow as tf

from keras_estimator.canned import feature_inputs
from keras_estimator.canned.dnn import dnn_network, layer_summary
from keras_estimator.canned.dnn_linear_combined import check_combined_args
from keras_estimator.canned.v1 import heads, optimizers, slot_names
from keras_estimator.canned.v1.dnn import check_features
from keras_estimator.estimator.estimator_v1 import Estimator
from keras_estimator.spec.mode_keys import ModeKeys
from keras_estimator.spec.run_config import RunConfig

_V1 = tf.compat.v1
_DNN_LEARNING_RATE = 0.001
_LINEAR_LEARNING_RATE = 0.005


def _check_no_sync_replicas(optimizer: Any) -> None:
    if isinstance(optimizer, _V1.train.SyncReplicasOptimizer):
        raise ValueError(
            "SyncReplicasOptimizer does not support multi optimizers case. Therefore, it is "
            "not supported in DNNLinearCombined model. If you want to use this optimizer, "
            "please use either DNN or Linear model."
        )


class _CombinedEstimatorV1(Estimator):
    def __init__(self, head, model_dir, linear_feature_columns, linear_optimizer,
                 dnn_feature_columns, dnn_optimizer, dnn_hidden_units, dnn_activation_fn,
                 dnn_dropout, input_layer_partitioner, config, warm_start_from, batch_norm,
                 linear_sparse_combiner) -> None:  # fmt: skip
        del input_layer_partitioner  # keras_estimator's variables are never partitioned
        linear_columns, dnn_columns, dnn_hidden_units, dnn_dropout = check_combined_args(
            linear_feature_columns, dnn_feature_columns, dnn_hidden_units, dnn_dropout
        )
        optimizers.check_optimizer_name(linear_optimizer)
        optimizers.check_optimizer_name(dnn_optimizer)
        self._head = head

        def model_fn(features, labels, mode):
            check_features(features)
            logits, parts = None, []
            if dnn_columns:
                resolved = optimizers.get_optimizer_instance(dnn_optimizer, _DNN_LEARNING_RATE)
                _check_no_sync_replicas(resolved)
                with _V1.variable_scope("dnn") as scope:
                    logits = dnn_network(features, mode, head.logits_dimension,
                                         dnn_hidden_units, dnn_columns, dnn_activation_fn,
                                         dnn_dropout, batch_norm)  # fmt: skip
                parts.append((resolved, scope.name))
            if linear_columns:
                rate = min(_LINEAR_LEARNING_RATE, 1.0 / math.sqrt(len(linear_columns)))
                resolved = optimizers.get_optimizer_instance(linear_optimizer, rate)
                _check_no_sync_replicas(resolved)
                with _V1.variable_scope("linear") as scope:
                    linear = feature_inputs.linear_logits(features, linear_columns,
                                                          head.logits_dimension,
                                                          linear_sparse_combiner)  # fmt: skip
                    if mode == ModeKeys.TRAIN:  # summaries are written in training only
                        layer_summary(linear, scope.name)
                parts.append((resolved, scope.name))
                logits = linear if logits is None else logits + linear

            def train_op_fn(loss: tf.Tensor) -> tf.Operation:
                train_ops = [
                    optimizer.minimize(loss, var_list=_V1.get_collection(
                        _V1.GraphKeys.TRAINABLE_VARIABLES, scope=scope_name))
                    for optimizer, scope_name in parts
                ]  # fmt: skip
                with tf.control_dependencies([tf.group(*train_ops)]):
                    return _V1.assign_add(_V1.train.get_global_step(), 1).op

            return slot_names.spec_with_v1_slot_names(
                head, features, mode, logits, labels, partitioned=False, train_op_fn=train_op_fn
            )

        super().__init__(model_fn, model_dir, config, warm_start_from=warm_start_from)


class DNNLinearCombinedClassifier(_CombinedEstimatorV1):
    """`tf.compat.v1.estimator.DNNLinearCombinedClassifier` (wide and deep, v1 training).

    Example:
        >>> from keras_estimator import v1 as estimator
        >>> est = estimator.DNNLinearCombinedClassifier(
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
        input_layer_partitioner: Any = None,
        config: RunConfig | None = None,
        warm_start_from: Any = None,
        loss_reduction: str = heads.SUM,
        batch_norm: bool = False,
        linear_sparse_combiner: str = "sum",
    ) -> None:
        head = heads.classification_head(n_classes, weight_column, label_vocabulary,
                                         loss_reduction)  # fmt: skip
        super().__init__(head, model_dir, linear_feature_columns, linear_optimizer,
                         dnn_feature_columns, dnn_optimizer, dnn_hidden_units,
                         dnn_activation_fn, dnn_dropout, input_layer_partitioner, config,
                         warm_start_from, batch_norm, linear_sparse_combiner)  # fmt: skip


class DNNLinearCombinedRegressor(_CombinedEstimatorV1):
    """`tf.compat.v1.estimator.DNNLinearCombinedRegressor` (wide and deep, v1 training).

    Example:
        >>> est = estimator.DNNLinearCombinedRegressor(
        ...     linear_feature_columns=[x], dnn_feature_columns=[x], dnn_hidden_units=[8])
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
        input_layer_partitioner: Any = None,
        config: RunConfig | None = None,
        warm_start_from: Any = None,
        loss_reduction: str = heads.SUM,
        batch_norm: bool = False,
        linear_sparse_combiner: str = "sum",
    ) -> None:
        head = heads.regression_head(label_dimension, weight_column, loss_reduction)
        super().__init__(head, model_dir, linear_feature_columns, linear_optimizer,
                         dnn_feature_columns, dnn_optimizer, dnn_hidden_units,
                         dnn_activation_fn, dnn_dropout, input_layer_partitioner, config,
                         warm_start_from, batch_norm, linear_sparse_combiner)  # fmt: skip


class DNNLinearCombinedEstimator(_CombinedEstimatorV1):
    """`tf.compat.v1.estimator.DNNLinearCombinedEstimator`: wide and deep through a head.

    Example:
        >>> est = estimator.DNNLinearCombinedEstimator(
        ...     head, linear_feature_columns=[a], dnn_feature_columns=[b], dnn_hidden_units=[8])
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
        input_layer_partitioner: Any = None,
        config: RunConfig | None = None,
        batch_norm: bool = False,
        linear_sparse_combiner: str = "sum",
    ) -> None:
        super().__init__(head, model_dir, linear_feature_columns, linear_optimizer,
                         dnn_feature_columns, dnn_optimizer, dnn_hidden_units,
                         dnn_activation_fn, dnn_dropout, input_layer_partitioner, config,
                         None, batch_norm, linear_sparse_combiner)  # fmt: skip
