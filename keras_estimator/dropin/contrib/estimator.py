"""`tf.contrib.estimator`: its in-memory BoostedTrees trainers (TF 1.13 - 1.15), and the
extenders `add_metrics` (tf.estimator.add_metrics since) and `forward_features`.

Each trains a BoostedTrees estimator on an input_fn that holds the whole training set as
one element (`Dataset.from_tensors(...)`, or a `(features, labels)` tuple), one layer per
step, and returns the trained estimator. The rest of tf.contrib.estimator moved to
tf.estimator / tf.estimator.experimental and raises an error saying so.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import tensorflow as tf

from keras_estimator.canned.add_metrics import add_metrics
from keras_estimator.canned.boosted_trees import BoostedTreesClassifier, BoostedTreesRegressor
from keras_estimator.canned.forward_features import forward_features
from keras_estimator.dropin.contrib.removed import removed_attribute_getattr
from keras_estimator.spec.run_config import RunConfig

_INSTEAD = "tf.estimator / tf.estimator.experimental (e.g. add_metrics, stop_if_no_increase_hook)"


def _repeated(train_input_fn: Callable) -> Callable:
    """The input_fn, its Dataset repeated: every step sees the whole (in-memory) data."""

    def input_fn() -> Any:
        result = train_input_fn()
        return result.repeat() if isinstance(result, tf.data.Dataset) else result

    return input_fn


def boosted_trees_classifier_train_in_memory(
    train_input_fn: Callable,
    feature_columns: Any,
    model_dir: str | os.PathLike | None = None,
    n_classes: int = 2,
    weight_column: Any = None,
    label_vocabulary: list[str] | None = None,
    n_trees: int = 100,
    max_depth: int = 6,
    learning_rate: float = 0.1,
    l1_regularization: float = 0.0,
    l2_regularization: float = 0.0,
    tree_complexity: float = 0.0,
    min_node_weight: float = 0.0,
    config: RunConfig | None = None,
    train_hooks: list | None = None,
    center_bias: bool = False,
    pruning_mode: str = "none",
    quantile_sketch_epsilon: float = 0.01,
) -> BoostedTreesClassifier:
    """Trains a BoostedTreesClassifier on the in-memory dataset of `train_input_fn`.

    Example:
        >>> def train_input_fn():
        ...     return tf.data.Dataset.from_tensors(({"x": x}, labels))  # not batched
        >>> est = boosted_trees_classifier_train_in_memory(train_input_fn, columns, n_trees=10)
        >>> est.evaluate(train_input_fn, steps=1)
    """
    est = BoostedTreesClassifier(
        feature_columns, n_batches_per_layer=1, model_dir=model_dir, n_classes=n_classes,
        weight_column=weight_column, label_vocabulary=label_vocabulary, n_trees=n_trees,
        max_depth=max_depth, learning_rate=learning_rate, l1_regularization=l1_regularization,
        l2_regularization=l2_regularization, tree_complexity=tree_complexity,
        min_node_weight=min_node_weight, config=config, center_bias=center_bias,
        pruning_mode=pruning_mode, quantile_sketch_epsilon=quantile_sketch_epsilon,
        train_in_memory=True,
    )  # fmt: skip
    est.train(_repeated(train_input_fn), hooks=train_hooks)
    return est


def boosted_trees_regressor_train_in_memory(
    train_input_fn: Callable,
    feature_columns: Any,
    model_dir: str | os.PathLike | None = None,
    label_dimension: int = 1,
    weight_column: Any = None,
    n_trees: int = 100,
    max_depth: int = 6,
    learning_rate: float = 0.1,
    l1_regularization: float = 0.0,
    l2_regularization: float = 0.0,
    tree_complexity: float = 0.0,
    min_node_weight: float = 0.0,
    config: RunConfig | None = None,
    train_hooks: list | None = None,
    center_bias: bool = False,
    pruning_mode: str = "none",
    quantile_sketch_epsilon: float = 0.01,
) -> BoostedTreesRegressor:
    """Trains a BoostedTreesRegressor on the in-memory dataset of `train_input_fn`.

    Example:
        >>> est = boosted_trees_regressor_train_in_memory(train_input_fn, columns, n_trees=10)
    """
    est = BoostedTreesRegressor(
        feature_columns, n_batches_per_layer=1, model_dir=model_dir,
        label_dimension=label_dimension, weight_column=weight_column, n_trees=n_trees,
        max_depth=max_depth, learning_rate=learning_rate, l1_regularization=l1_regularization,
        l2_regularization=l2_regularization, tree_complexity=tree_complexity,
        min_node_weight=min_node_weight, config=config, center_bias=center_bias,
        pruning_mode=pruning_mode, quantile_sketch_epsilon=quantile_sketch_epsilon,
        train_in_memory=True,
    )  # fmt: skip
    est.train(_repeated(train_input_fn), hooks=train_hooks)
    return est


__getattr__ = removed_attribute_getattr("estimator", _INSTEAD)

__all__ = [
    "add_metrics",
    "boosted_trees_classifier_train_in_memory",
    "boosted_trees_regressor_train_in_memory",
    "forward_features",
]
