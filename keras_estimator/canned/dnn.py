"""DNNClassifier and DNNRegressor: feed-forward networks over feature columns."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import tensorflow as tf

from keras_estimator.canned import canned_model_fn, feature_inputs
from keras_estimator.estimator.estimator import Estimator
from keras_estimator.spec.mode_keys import ModeKeys
from keras_estimator.spec.run_config import RunConfig

_V1 = tf.compat.v1


def layer_summary(value: tf.Tensor, tag: str) -> None:
    """tf.estimator's training summaries of a layer: `<tag>/fraction_of_zero_values`
    and `<tag>/activation`."""
    _V1.summary.scalar(f"{tag}/fraction_of_zero_values", tf.math.zero_fraction(value))
    _V1.summary.histogram(f"{tag}/activation", value)


def dnn_network(
    features: dict,
    mode: str,
    units: int,
    hidden_units: list[int],
    feature_columns: list,
    activation_fn: Callable,
    dropout: float | None,
    batch_norm: bool,
) -> tf.Tensor:
    """The network in the current variable scope: `input_from_feature_columns/...`,
    `hiddenlayer_<i>/{kernel,bias}` (and `batchnorm_<i>`), `logits/{kernel,bias}`."""
    training = mode == ModeKeys.TRAIN
    scope = _V1.get_variable_scope().name
    prefix = f"{scope}/" if scope else ""
    net = feature_inputs.dense_input(features, feature_columns)
    for index, width in enumerate(hidden_units):
        name = f"hiddenlayer_{index}"
        net = _V1.layers.dense(
            net, width, activation=activation_fn, name=name,
            kernel_initializer=_V1.glorot_uniform_initializer(),
        )  # fmt: skip
        if dropout is not None and training:
            net = _V1.layers.dropout(net, rate=dropout, training=True)
        if batch_norm:
            with _V1.variable_scope(name):
                net = _V1.layers.batch_normalization(
                    net, momentum=0.999, training=training, name=f"batchnorm_{index}"
                )
        if training:
            layer_summary(net, f"{prefix}{name}")
    logits = _V1.layers.dense(
        net, units, name="logits", kernel_initializer=_V1.glorot_uniform_initializer()
    )
    if training:
        layer_summary(logits, f"{prefix}logits")
    return logits


def dnn_logits(
    features: dict,
    mode: str,
    units: int,
    hidden_units: list[int],
    feature_columns: list,
    activation_fn: Callable,
    dropout: float | None,
    batch_norm: bool,
) -> tf.Tensor:
    """The network under variable scope `dnn`, with tf.estimator's variable names."""
    with _V1.variable_scope("dnn"):
        return dnn_network(features, mode, units, hidden_units, feature_columns,
                           activation_fn, dropout, batch_norm)  # fmt: skip


def dnn_logit_fn_builder(
    units: int,
    hidden_units: list[int],
    feature_columns: list,
    activation_fn: Callable,
    dropout: float | None,
    input_layer_partitioner: Any,
    batch_norm: bool,
) -> Callable[[dict, str], tf.Tensor]:
    """A `logit_fn(features, mode)` building the canned DNN's network, as tf.estimator 2.15's
    `tf.compat.v1.estimator.experimental.dnn_logit_fn_builder`.

    The variables are created in the caller's variable scope with the canned names
    (`hiddenlayer_0/kernel`, ..., `logits/bias`); DNNClassifier calls it under `dnn`.
    `input_layer_partitioner` is accepted and not used: keras_estimator's variables are
    never partitioned.

    Example:
        >>> logit_fn = dnn_logit_fn_builder(3, [16], columns, tf.nn.relu, None, None, False)
        >>> def model_fn(features, labels, mode):
        ...     with tf.compat.v1.variable_scope("dnn"):
        ...         logits = logit_fn(features=features, mode=mode)
    """
    del input_layer_partitioner  # no partitioned variables here
    if not isinstance(units, int):
        raise ValueError(f"units must be an int.  Given type: {type(units)}")
    hidden_units, columns, dropout = check_dnn_args(hidden_units, feature_columns, dropout)

    def dnn_logit_fn(features: dict, mode: str) -> tf.Tensor:
        return dnn_network(features, mode, units, hidden_units, columns, activation_fn,
                           dropout, batch_norm)  # fmt: skip

    return dnn_logit_fn


def check_dnn_args(
    hidden_units: Any, feature_columns: Any, dropout: Any
) -> tuple[list[int], list, float | None]:
    """The DNN's `(hidden_units, feature_columns, dropout)`, checked (v2 and v1 classes)."""
    return (
        _check_hidden_units(hidden_units),
        feature_inputs.check_feature_columns(feature_columns),
        _check_dropout(dropout),
    )


def _check_hidden_units(hidden_units: Any) -> list[int]:
    if hidden_units is None or isinstance(hidden_units, int | str):
        raise ValueError(
            "hidden_units must be a list of layer widths, e.g. [64, 32] or "
            f"'64 32'.split(). Received: hidden_units={hidden_units!r}"
        )
    units = [_layer_width(u, hidden_units) for u in hidden_units]
    if any(u <= 0 for u in units):
        raise ValueError(
            "hidden_units must be positive integers, e.g. [64, 32]. "
            f"Received: hidden_units={list(hidden_units)!r}"
        )
    return units


def _layer_width(unit: Any, hidden_units: Any) -> int:
    # tf.keras 2's Dense took int(units): 2.15 trained on `flags.hidden_units.split(" ")`
    # (['16', '8']) and on floats (16.5 -> 16); int('16.5') or int('x') failed there too.
    try:
        return int(unit)
    except (TypeError, ValueError) as error:
        raise ValueError(
            f"hidden_units must be layer widths that int() accepts, e.g. [64, 32] or "
            f"['64', '32']; {unit!r} is not ({error}). Received: hidden_units={hidden_units!r}"
        ) from None


def _check_dropout(dropout: Any) -> float | None:
    if dropout is not None and not 0.0 <= float(dropout) < 1.0:
        raise ValueError(f"dropout must be in [0, 1); given {dropout}.")
    return dropout


class _DNNEstimator(Estimator):
    def __init__(self, head, hidden_units, feature_columns, model_dir, optimizer, activation_fn,
                 dropout, config, warm_start_from, batch_norm) -> None:  # fmt: skip
        hidden_units, columns, dropout = check_dnn_args(hidden_units, feature_columns, dropout)
        canned_model_fn.check_optimizer(optimizer)
        self._head = head

        def model_fn(features, labels, mode):
            logits = dnn_logits(features, mode, head.logits_dimension, hidden_units, columns,
                                activation_fn, dropout, batch_norm)  # fmt: skip
            return canned_model_fn.spec_with_optimizers(
                head, features, mode, logits, labels, [(optimizer, None, "dnn", False)]
            )

        super().__init__(model_fn, model_dir, config, warm_start_from=warm_start_from)


class DNNClassifier(_DNNEstimator):
    """A feed-forward classifier over feature columns, as `tf.estimator.DNNClassifier`.

    Checkpoints use tf.estimator 2.15's names (`dnn/hiddenlayer_0/kernel`, `dnn/logits/bias`,
    `training/Adagrad/...`), so a model_dir it wrote evaluates and resumes here.

    Example:
        >>> columns = [tf.feature_column.numeric_column(k) for k in ("a", "b")]
        >>> est = DNNClassifier(hidden_units=[10, 10], feature_columns=columns, n_classes=3)
        >>> est.train(input_fn, steps=100)
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
        config: RunConfig | None = None,
        warm_start_from: Any = None,
        loss_reduction: Any = "sum_over_batch_size",
        batch_norm: bool = False,
    ) -> None:
        head = canned_model_fn.classification_head(n_classes, weight_column, label_vocabulary,
                                                   loss_reduction)  # fmt: skip
        super().__init__(head, hidden_units, feature_columns, model_dir, optimizer, activation_fn,
                         dropout, config, warm_start_from, batch_norm)  # fmt: skip


class DNNRegressor(_DNNEstimator):
    """A feed-forward regressor over feature columns, as `tf.estimator.DNNRegressor`.

    Example:
        >>> est = DNNRegressor(hidden_units=[16], feature_columns=columns, label_dimension=1)
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
        config: RunConfig | None = None,
        warm_start_from: Any = None,
        loss_reduction: Any = "sum_over_batch_size",
        batch_norm: bool = False,
    ) -> None:
        head = canned_model_fn.regression_head(label_dimension, weight_column, loss_reduction)
        super().__init__(head, hidden_units, feature_columns, model_dir, optimizer, activation_fn,
                         dropout, config, warm_start_from, batch_norm)  # fmt: skip


class DNNEstimator(_DNNEstimator):
    """A feed-forward network trained through any head, as `tf.estimator.DNNEstimator`.

    Example:
        >>> est = DNNEstimator(head=MultiLabelHead(n_classes=4), hidden_units=[16],
        ...                    feature_columns=columns)
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
        config: RunConfig | None = None,
        warm_start_from: Any = None,
        batch_norm: bool = False,
    ) -> None:
        super().__init__(head, hidden_units, feature_columns, model_dir, optimizer, activation_fn,
                         dropout, config, warm_start_from, batch_norm)  # fmt: skip
