"""tf.compat.v1.estimator's DNNClassifier / DNNRegressor / DNNEstimator (tf.estimator 2.15).

The network and its variable names are the v2 classes' (`dnn/hiddenlayer_<i>/kernel`,
`dnn/input_from_feature_columns/input_layer/...` through the v1 input layer,
`dnn/logits/bias`); the head sums the loss over the batch (`loss_reduction=SUM`), and a
`tf.compat.v1.train` optimizer (Adagrad at 0.05 by default) trains it with 2.15's slot
names (`dnn/hiddenlayer_0/kernel/t_0/Adagrad`).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import tensorflow as tf

from keras_estimator.canned.dnn import check_dnn_args, dnn_network
from keras_estimator.canned.v1 import heads, optimizers, slot_names
from keras_estimator.estimator.estimator_v1 import Estimator
from keras_estimator.spec.run_config import RunConfig

_V1 = tf.compat.v1
_LEARNING_RATE = 0.05  # tf.estimator 2.15's rate for a named optimizer


def check_features(features: Any) -> dict:
    if not isinstance(features, dict):
        raise ValueError(
            f"features should be a dictionary of `Tensor`s. Given type: {type(features)}"
        )
    return features


class _DNNEstimatorV1(Estimator):
    def __init__(self, head, hidden_units, feature_columns, model_dir, optimizer, activation_fn,
                 dropout, input_layer_partitioner, config, warm_start_from,
                 batch_norm) -> None:  # fmt: skip
        del input_layer_partitioner  # keras_estimator's variables are never partitioned
        hidden_units, columns, dropout = check_dnn_args(hidden_units, feature_columns, dropout)
        optimizers.check_optimizer_name(optimizer)
        self._head = head

        def model_fn(features, labels, mode):
            resolved = optimizers.get_optimizer_instance(optimizer, _LEARNING_RATE)
            check_features(features)
            with _V1.variable_scope("dnn"):
                logits = dnn_network(features, mode, head.logits_dimension, hidden_units,
                                     columns, activation_fn, dropout, batch_norm)  # fmt: skip
                return slot_names.spec_with_v1_slot_names(
                    head, features, mode, logits, labels, partitioned=True, optimizer=resolved
                )

        super().__init__(model_fn, model_dir, config, warm_start_from=warm_start_from)


class DNNClassifier(_DNNEstimatorV1):
    """`tf.compat.v1.estimator.DNNClassifier`: a feed-forward classifier, loss summed over
    the batch, trained by a `tf.compat.v1.train` optimizer.

    Example:
        >>> from keras_estimator import v1 as estimator
        >>> columns = [tf.feature_column.numeric_column(k) for k in ("a", "b")]
        >>> est = estimator.DNNClassifier([16, 16], columns, n_classes=3)
        >>> est.train(input_fn, steps=400)
    """

    def __init__(
        self,
        hidden_units: list[int],
        feature_columns: list,
        model_dir: str | os.PathLike | None = None,
        n_classes: int = 2,
        weight_column: Any = None,
        label_vocabulary: list[str] | None = None,
        optimizer: Any = "Adagrad",
        activation_fn: Callable = tf.nn.relu,
        dropout: float | None = None,
        input_layer_partitioner: Any = None,
        config: RunConfig | None = None,
        warm_start_from: Any = None,
        loss_reduction: str = heads.SUM,
        batch_norm: bool = False,
    ) -> None:
        head = heads.classification_head(n_classes, weight_column, label_vocabulary,
                                         loss_reduction)  # fmt: skip
        super().__init__(head, hidden_units, feature_columns, model_dir, optimizer,
                         activation_fn, dropout, input_layer_partitioner, config,
                         warm_start_from, batch_norm)  # fmt: skip


class DNNRegressor(_DNNEstimatorV1):
    """`tf.compat.v1.estimator.DNNRegressor`: squared error summed over the batch.

    Example:
        >>> est = estimator.DNNRegressor([16], columns, label_dimension=1)
    """

    def __init__(
        self,
        hidden_units: list[int],
        feature_columns: list,
        model_dir: str | os.PathLike | None = None,
        label_dimension: int = 1,
        weight_column: Any = None,
        optimizer: Any = "Adagrad",
        activation_fn: Callable = tf.nn.relu,
        dropout: float | None = None,
        input_layer_partitioner: Any = None,
        config: RunConfig | None = None,
        warm_start_from: Any = None,
        loss_reduction: str = heads.SUM,
        batch_norm: bool = False,
    ) -> None:
        head = heads.regression_head(label_dimension, weight_column, loss_reduction)
        super().__init__(head, hidden_units, feature_columns, model_dir, optimizer,
                         activation_fn, dropout, input_layer_partitioner, config,
                         warm_start_from, batch_norm)  # fmt: skip


class DNNEstimator(_DNNEstimatorV1):
    """`tf.compat.v1.estimator.DNNEstimator`: the v1 DNN through a given head.

    Example:
        >>> est = estimator.DNNEstimator(head, hidden_units=[16], feature_columns=columns)
    """

    def __init__(
        self,
        head: Any,
        hidden_units: list[int],
        feature_columns: list,
        model_dir: str | os.PathLike | None = None,
        optimizer: Any = "Adagrad",
        activation_fn: Callable = tf.nn.relu,
        dropout: float | None = None,
        input_layer_partitioner: Any = None,
        config: RunConfig | None = None,
        warm_start_from: Any = None,
        batch_norm: bool = False,
    ) -> None:
        super().__init__(head, hidden_units, feature_columns, model_dir, optimizer,
                         activation_fn, dropout, input_layer_partitioner, config,
                         warm_start_from, batch_norm)  # fmt: skip
