"""`tf.estimator.experimental.LinearSDCA`: the SDCA optimizer of LinearClassifier / Regressor.

As in tf.estimator 2.15: binary classification minimizes the logistic loss, regression
(one-dimensional labels) the squared loss, each example's dual state kept by its
`example_id` string; categorical columns are sparse features and dense (numeric) columns
dense ones, plus the bias. The model's variables keep the canned linear names; the step
itself is canned/sdca_graph.py.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import tensorflow as tf

from keras_estimator.canned import sdca_graph
from keras_estimator.canned.heads import BinaryClassHead, MultiClassHead, RegressionHead
from keras_estimator.seam import internals
from keras_estimator.spec.mode_keys import ModeKeys
from keras_estimator.utils.log import quiet_tf_deprecations

logger = logging.getLogger("keras_estimator")
_V1 = tf.compat.v1


class LinearSDCA:
    """Stochastic Dual Coordinate Ascent for linear estimators, as
    `tf.estimator.experimental.LinearSDCA`: pass it as the `optimizer` of
    `LinearClassifier` (binary) or `LinearRegressor` (one-dimensional labels).

    Each training step runs one SDCA pass over the batch (TensorFlow's `SdcaOptimizerV2`
    kernel). The input_fn's features must hold `example_id_column`: a string per example
    ([batch]), the same string each time an example is seen, so that its dual state is
    found again. `sparse_combiner` must be `"sum"`.

    Args:
        example_id_column: the feature key of the example ids (string, [batch]).
        num_loss_partitions: the number of concurrent trainers (workers); 1 on one machine.
        num_table_shards: shards of the example-state table (None: 1).
        symmetric_l1_regularization: l1 strength, >= 0.
        symmetric_l2_regularization: l2 strength, > 0 (typically > 1).
        adaptive: adaptive sampling of the examples within the batch.

    Example:
        >>> sdca = LinearSDCA(example_id_column="example_id", symmetric_l2_regularization=2.0)
        >>> est = LinearClassifier(feature_columns=columns, optimizer=sdca)
        >>> est.train(input_fn, steps=50)  # features include "example_id"
    """

    def __init__(
        self,
        example_id_column: str,
        num_loss_partitions: int = 1,
        num_table_shards: int | None = None,
        symmetric_l1_regularization: float = 0.0,
        symmetric_l2_regularization: float = 1.0,
        adaptive: bool = False,
    ) -> None:
        self._example_id_column = example_id_column
        self._num_loss_partitions = num_loss_partitions
        self._num_table_shards = num_table_shards
        self._symmetric_l1_regularization = symmetric_l1_regularization
        self._symmetric_l2_regularization = symmetric_l2_regularization
        self._adaptive = adaptive

    def __repr__(self) -> str:
        return (
            f"LinearSDCA(example_id_column={self._example_id_column!r}, "
            f"num_loss_partitions={self._num_loss_partitions}, "
            f"num_table_shards={self._num_table_shards}, "
            f"symmetric_l1_regularization={self._symmetric_l1_regularization}, "
            f"symmetric_l2_regularization={self._symmetric_l2_regularization}, "
            f"adaptive={self._adaptive})"
        )


def check_sdca(optimizer: LinearSDCA, head: Any, sparse_combiner: str) -> str:
    """Raises tf.estimator 2.15's errors for what SDCA cannot train; returns the loss type.

    2.15 raised the regularization errors when training began; they are raised here, when
    the estimator is made, with the rest.
    """
    if sparse_combiner != "sum":
        raise ValueError(
            'sparse_combiner must be "sum" when optimizer is a LinearSDCA object. Expected '
            "sparse_combiner='sum' (the default). Received: "
            f"sparse_combiner={sparse_combiner!r}"
        )
    if isinstance(head, MultiClassHead):
        raise ValueError(
            "LinearSDCA cannot be used in a multi-class setting. Expected n_classes=2 (or a "
            "gradient optimizer such as 'Ftrl' for more classes). Received: "
            f"n_classes={head.logits_dimension}"
        )
    if isinstance(head, RegressionHead) and head.logits_dimension > 1:
        raise ValueError(
            "LinearSDCA can only be used with one-dimensional label. Expected "
            "label_dimension=1. Received: "
            f"label_dimension={head.logits_dimension}"
        )
    if isinstance(head, BinaryClassHead):
        loss_type = "logistic_loss"
    elif isinstance(head, RegressionHead):
        loss_type = "squared_loss"
    else:
        raise ValueError(
            f"Unsupported head type: {type(head).__name__}. Expected a binary classification "
            "or one-dimensional regression head with LinearSDCA. Received: "
            f"head={head!r}"
        )
    l1 = optimizer._symmetric_l1_regularization
    l2 = optimizer._symmetric_l2_regularization
    if l2 <= 0.0:
        raise ValueError(
            "symmetric_l2_regularization should be positive. Expected a value > 0 (typically "
            f"> 1). Received: symmetric_l2_regularization={l2!r}"
        )
    if l1 < 0.0:
        raise ValueError(
            "symmetric_l1_regularization should be non-negative. Expected a value >= 0. "
            f"Received: symmetric_l1_regularization={l1!r}"
        )
    if l2 <= 1.0:
        logger.warning(
            "symmetric_l2_regularization for SDCA should typically be larger than for online "
            "optimization methods. Recommended value is of the order of the average L2 norm "
            "of the training examples. Received: symmetric_l2_regularization=%s",
            l2,
        )
    return loss_type


def _variable_named(name: str) -> tf.Variable:
    for variable in _V1.get_collection(_V1.GraphKeys.GLOBAL_VARIABLES):
        if variable.name.split(":")[0] == name:
            return variable
    raise ValueError(f"The linear model has no variable {name!r}.")  # pragma: no cover


def _column_inputs(
    column: Any, cache: Any
) -> tuple[sdca_graph.SparseFeature | None, tf.Tensor | None]:
    """(sparse feature, None) for a categorical column, (None, dense [batch, d]) for a
    dense one without variables of its own; else tf.estimator 2.15's ValueError."""
    if hasattr(column, "get_sparse_tensors") and hasattr(column, "num_buckets"):
        pair = column.get_sparse_tensors(cache, None)
        return sdca_graph.unique_sparse_feature(pair.id_tensor, pair.weight_tensor), None
    if isinstance(column, internals.feature_column_internals.DenseColumn):
        if column.variable_shape.ndims != 1:
            raise ValueError(
                f"Column {type(column).__name__} has rank {column.variable_shape.ndims}, "
                f"larger than 1. Expected dense columns of shape [d] with LinearSDCA. "
                f"Received: column={column.name!r}"
            )
        try:
            dense = column.get_dense_tensor(cache, None)
        except (AttributeError, TypeError):  # it needs variables (an embedding)
            dense = None
        if dense is not None:
            return None, tf.cast(dense, tf.float32)
    raise ValueError(
        f"LinearSDCA does not support column type {type(column).__name__}. Expected "
        "categorical columns (vocabulary, hash bucket, identity, bucketized, crossed, "
        f"weighted) or numeric columns. Received: column={column.name!r}"
    )


def model_fn(
    head: Any,
    columns: list,
    optimizer: LinearSDCA,
    sparse_combiner: str,
    unshrunk_name: Callable[[str], str],
    logits_fn: Callable[[dict], tf.Tensor],
) -> Callable:
    """The model_fn of a linear model trained by SDCA, for the v2 and v1 estimators.

    `logits_fn(features)` builds the linear model (`linear/linear_model/...`); the
    estimator's head makes the spec; in TRAIN its train op is `train_op`'s SDCA step.
    """
    loss_type = check_sdca(optimizer, head, sparse_combiner)

    def sdca_model_fn(features: dict, labels: Any, mode: str) -> Any:
        logits = logits_fn(features)
        if mode != ModeKeys.TRAIN:
            return head.create_estimator_spec(features, mode, logits, labels)

        def train_op_fn(loss: tf.Tensor) -> tf.Operation:
            return train_op(optimizer, loss_type, head, columns, features, labels, logits,
                            "linear/linear_model", unshrunk_name)  # fmt: skip

        return head.create_estimator_spec(features, mode, logits, labels,
                                          train_op_fn=train_op_fn)  # fmt: skip

    return sdca_model_fn


def train_op(
    optimizer: LinearSDCA,
    loss_type: str,
    head: Any,
    columns: list,
    features: dict,
    labels: Any,
    logits: tf.Tensor,
    model_scope: str,
    unshrunk_name: Any,
) -> tf.Operation:
    """The SDCA step for the linear model built under `model_scope` (`linear/linear_model`):
    its `<column>/weights` and `bias_weights` trained on this batch.

    `unshrunk_name(weights_name)` names the unshrunk copy of each weight variable (v2 and v1
    estimators named them differently).
    """
    example_id = optimizer._example_id_column
    if example_id not in features:
        # A KeyError, as tf.estimator 2.15 raised (a bare KeyError: 'example_id').
        raise KeyError(
            f"The example id column {example_id!r} of LinearSDCA is not in features. Expected "
            "input_fn's features to hold a string per example under that key (the same string "
            "each time an example is seen); add it to the features, or pass the key they use "
            f"as LinearSDCA(example_id_column=...). Received: features={sorted(features)}"
        )
    cache = internals.feature_column_internals.FeatureTransformationCache(features)
    sparse, sparse_weights, dense, dense_weights = [], [], [], []
    with quiet_tf_deprecations():
        for column in sorted(columns, key=lambda c: c.name):
            feature, values = _column_inputs(column, cache)
            weights = _variable_named(f"{model_scope}/{column.name}/weights")
            if feature is not None:
                sparse.append(feature)
                sparse_weights.append(weights)
            else:
                dense.append(values)
                dense_weights.append(weights)
    batch = tf.shape(logits)[0]
    dense.append(tf.ones(tf.stack([batch, 1]), tf.float32))
    dense_weights.append(_variable_named(f"{model_scope}/bias_weights"))
    examples = sdca_graph.Examples(
        sparse_features=sparse,
        dense_features=dense,
        labels=tf.reshape(head._processed_labels(logits, labels), [-1]),
        weights=tf.reshape(tf.cast(head._weights(features, logits), tf.float32), [-1]),
        example_ids=tf.reshape(tf.strings.as_string(features[example_id])
                               if features[example_id].dtype != tf.string
                               else features[example_id], [-1]),
    )  # fmt: skip
    options = sdca_graph.SDCAOptions(
        loss_type=loss_type,
        l1=float(optimizer._symmetric_l1_regularization),
        l2=float(optimizer._symmetric_l2_regularization),
        num_loss_partitions=int(optimizer._num_loss_partitions),
        num_table_shards=int(optimizer._num_table_shards or 1),
        adaptive=bool(optimizer._adaptive),
    )
    names = [unshrunk_name(w.name.split(":")[0]) for w in [*sparse_weights, *dense_weights]]
    return sdca_graph.training_step(
        examples, sparse_weights, dense_weights, names, options, _V1.train.get_global_step()
    )
