"""2.15's `canned/dnn.py`. The plain names are the v1 estimators
(`tf.compat.v1.estimator.DNNClassifier`), the `V2` names `tf.estimator`'s.

`_DNNModel` / `_DNNModelV2` are Keras 3 models computing the DNN's logits from feature
columns (our `DenseFeatures`, then `Dense` layers), as 2.15's Keras models did.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import keras
import tensorflow as tf

from keras_estimator.canned import canned_model_fn
from keras_estimator.canned.dnn import DNNClassifier as DNNClassifierV2
from keras_estimator.canned.dnn import DNNEstimator as DNNEstimatorV2
from keras_estimator.canned.dnn import DNNRegressor as DNNRegressorV2
from keras_estimator.canned.dnn import (
    check_dnn_args,
    dnn_logit_fn_builder,
    dnn_logits,
    layer_summary,
)
from keras_estimator.canned.v1.dnn import DNNClassifier, DNNEstimator, DNNRegressor, check_features
from keras_estimator.keras_bridge.dense_features import DenseFeatures
from keras_estimator.spec.mode_keys import ModeKeys

__all__ = [
    "DNNClassifier",
    "DNNClassifierV2",
    "DNNEstimator",
    "DNNEstimatorV2",
    "DNNRegressor",
    "DNNRegressorV2",
    "dnn_logit_fn_builder",
    "dnn_logit_fn_builder_v2",
    "dnn_model_fn_v2",
]


class _DNNModelV2(keras.Model):
    """The canned DNN's network as a Keras model: feature columns, hidden layers, logits.

    Args:
        units: the logits' width.
        hidden_units: the hidden layers' widths.
        feature_columns: the dense feature columns the network reads.
        activation_fn: the hidden layers' activation.
        dropout: the dropout rate after each hidden layer in training, or None.
        batch_norm: whether each hidden layer is followed by batch normalization.
        name: the model's name.

    Example:
        >>> model = _DNNModelV2(3, [16], columns, tf.nn.relu, None, False)
        >>> logits = model(features, mode=ModeKeys.PREDICT)
    """

    def __init__(
        self,
        units: int,
        hidden_units: list,
        feature_columns: list,
        activation_fn: Callable,
        dropout: float | None,
        batch_norm: bool,
        name: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(name=name, **kwargs)
        self._input_layer = DenseFeatures(feature_columns, name="input_layer")
        self._hidden = []
        for index, width in enumerate(hidden_units):
            layers = [
                keras.layers.Dense(width, activation=activation_fn, name=f"hiddenlayer_{index}")
            ]
            if dropout is not None:
                layers.append(keras.layers.Dropout(dropout))
            if batch_norm:
                layers.append(
                    keras.layers.BatchNormalization(momentum=0.999, name=f"batchnorm_{index}")
                )
            self._hidden.append(layers)
        self._logits = keras.layers.Dense(units, name="logits")

    def call(self, features: dict, mode: str = ModeKeys.PREDICT) -> tf.Tensor:
        training = mode == ModeKeys.TRAIN
        net = self._input_layer(check_features(features))
        for layers in self._hidden:
            for layer in layers:
                net = (
                    layer(net, training=training)
                    if not isinstance(layer, keras.layers.Dense)
                    else layer(net)
                )
        return self._logits(net)


class _DNNModel(_DNNModelV2):
    """2.15's v1 `_DNNModel` (its `input_layer_partitioner` is accepted and not used:
    keras_estimator never partitions variables)."""

    def __init__(
        self,
        units: int,
        hidden_units: list,
        feature_columns: list,
        activation_fn: Callable,
        dropout: float | None,
        input_layer_partitioner: Any = None,
        batch_norm: bool = False,
        name: str | None = None,
        **kwargs: Any,
    ) -> None:
        del input_layer_partitioner
        super().__init__(
            units,
            hidden_units,
            feature_columns,
            activation_fn,
            dropout,
            batch_norm,
            name=name,
            **kwargs,
        )


def dnn_logit_fn_builder_v2(
    units: int,
    hidden_units: list,
    feature_columns: list,
    activation_fn: Callable,
    dropout: float | None,
    batch_norm: bool,
) -> Callable:
    """2.15's v2 `dnn_logit_fn_builder`: the same network, with no partitioner argument."""
    return dnn_logit_fn_builder(
        units, hidden_units, feature_columns, activation_fn, dropout, None, batch_norm
    )


def _add_hidden_layer_summary(value: tf.Tensor, tag: str) -> None:
    layer_summary(value, tag)


def _validate_features(features: Any) -> dict:
    return check_features(features)


def _name_from_scope_name(name: str) -> str:
    """A scope name without its trailing slash, as 2.15 named layers."""
    return name[:-1] if name and name[-1] == "/" else name


def dnn_model_fn_v2(
    features: dict,
    labels: Any,
    mode: str,
    head: Any,
    hidden_units: list,
    feature_columns: list,
    optimizer: Any = "Adagrad",
    activation_fn: Callable = tf.nn.relu,
    dropout: float | None = None,
    config: Any = None,
    use_tf_batch_norm: bool = True,
    batch_norm: bool = False,
) -> Any:
    """The v2 DNN's model_fn body: the network under `dnn`, then `head`'s spec.

    Returns:
        The EstimatorSpec for `mode`.

    Example:
        >>> def model_fn(features, labels, mode):
        ...     return dnn_model_fn_v2(features, labels, mode, head, [16], columns)
    """
    del config, use_tf_batch_norm
    hidden_units, columns, dropout = check_dnn_args(hidden_units, feature_columns, dropout)
    canned_model_fn.check_optimizer(optimizer)
    logits = dnn_logits(
        features,
        mode,
        head.logits_dimension,
        hidden_units,
        columns,
        activation_fn,
        dropout,
        batch_norm,
    )
    return canned_model_fn.spec_with_optimizers(
        head, features, mode, logits, labels, [(optimizer, None, "dnn", False)]
    )
