"""BoostedTreesClassifier, BoostedTreesRegressor, BoostedTreesEstimator (tf.estimator 2.8)."""

from __future__ import annotations

import os
from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from keras_estimator.canned import canned_model_fn
from keras_estimator.canned.boosted_trees import explanations
from keras_estimator.canned.boosted_trees.features import feature_layout
from keras_estimator.canned.boosted_trees.growth import TreeHParams
from keras_estimator.canned.boosted_trees.model_fn import (
    LOGITS_PATH_KEY,
    PATH_FEATURE_IDS_KEY,
    SCOPE,
    boosted_trees_model_fn,
)
from keras_estimator.canned.heads import BinaryClassHead, MultiClassHead, RegressionHead
from keras_estimator.estimator.estimator import Estimator
from keras_estimator.spec.run_config import RunConfig

_PRUNING_MODES = ("none", "pre", "post")


def _hparams(
    n_trees,
    max_depth,
    learning_rate,
    l1,
    l2,
    tree_complexity,
    min_node_weight,
    center_bias,
    pruning_mode,
    quantile_sketch_epsilon,
) -> TreeHParams:
    hparams = TreeHParams(
        int(n_trees),
        int(max_depth),
        float(learning_rate),
        float(l1),
        float(l2),
        float(tree_complexity),
        float(min_node_weight),
        bool(center_bias),
        pruning_mode,
        float(quantile_sketch_epsilon),
    )
    for name, value in (
        ("n_trees", n_trees),
        ("max_depth", max_depth),
        ("learning_rate", learning_rate),
        ("quantile_sketch_epsilon", quantile_sketch_epsilon),
    ):
        if value <= 0:
            raise ValueError(f"Expected {name} > 0, received: {value}")
    for name, value in (
        ("l1_regularization", l1),
        ("l2_regularization", l2),
        ("tree_complexity", tree_complexity),
        ("min_node_weight", min_node_weight),
    ):
        if value < 0:
            raise ValueError(f"Expected {name} >= 0, received: {value}")
    if pruning_mode not in _PRUNING_MODES:
        raise ValueError(
            f"pruning_mode must be one of {_PRUNING_MODES}. Received: pruning_mode={pruning_mode!r}"
        )
    if tree_complexity > 0 and pruning_mode == "none":
        raise ValueError("Tree complexity have no effect unless pruning mode is chosen.")
    if tree_complexity <= 0 and pruning_mode != "none":
        raise ValueError("For pruning, tree_complexity must be positive.")
    return hparams


class _BoostedTreesBase(Estimator):
    """What the three share: the model_fn, feature importances, explanations."""

    def __init__(
        self,
        feature_columns,
        n_batches_per_layer,
        head,
        model_dir,
        config,
        hparams,
        is_classification,
        train_in_memory=False,
    ) -> None:
        if int(n_batches_per_layer) < 1:
            raise ValueError(
                "n_batches_per_layer must be a positive integer: the number of batches whose "
                f"statistics build each layer. Received: n_batches_per_layer={n_batches_per_layer}"
            )
        if train_in_memory and int(n_batches_per_layer) != 1:
            raise ValueError(
                "When train_in_memory is enabled, input_fn should return the entire dataset as "
                "a single batch, and n_batches_per_layer should be set as 1. Received: "
                f"n_batches_per_layer={n_batches_per_layer}"
            )
        num_quantiles = int(1.0 / hparams.quantile_sketch_epsilon)
        self._layout = feature_layout(feature_columns, num_quantiles)
        self._head = head
        self._hparams = hparams
        self._n_batches_per_layer = int(n_batches_per_layer)
        self._is_classification = is_classification
        self._center_bias = hparams.center_bias
        if head.logits_dimension > 1 and hparams.center_bias:
            raise ValueError("center_bias not yet support with n_classes > 2.")
        super().__init__(self._model_fn_for(explanations=False), model_dir, config)

    def _model_fn_for(self, explanations: bool) -> Callable:
        def model_fn(features, labels, mode):
            return boosted_trees_model_fn(
                features,
                labels,
                mode,
                self._head,
                self._layout,
                self._hparams,
                self._n_batches_per_layer,
                explanations=explanations,
            )

        return model_fn

    def _ensemble_variable(self, name: str) -> np.ndarray:
        if self.latest_checkpoint() is None:
            raise ValueError(
                f"No checkpoint in model_dir {self.model_dir!r}: the trees exist only after "
                "training. Call train() first. Received: checkpoint=None"
            )
        return self.get_variable_value(f"{SCOPE}/ensemble/{name}")

    def experimental_feature_importances(self, normalize: bool = False) -> OrderedDict:
        """Gain-based feature importances, by feature column name, largest first.

        Args:
            normalize: Divide by their sum (they must be non-negative).

        Returns:
            An OrderedDict from column name (e.g. `"x0_bucketized"`) to importance.

        Example:
            >>> est.experimental_feature_importances(normalize=True)
            OrderedDict([('x0', 0.71), ('x1', 0.29)])
        """
        return explanations.feature_importances(
            self._ensemble_variable("node_feature"),
            self._ensemble_variable("node_gain"),
            self._layout.names,
            normalize,
        )

    def experimental_predict_with_explanations(
        self,
        input_fn: Callable,
        predict_keys: Any = None,
        hooks: Any = None,
        checkpoint_path: str | None = None,
    ) -> Iterator[dict]:
        """Predictions with `bias` and `dfc` (directional feature contributions) per example.

        `dfc` is an OrderedDict from column name to its contribution to the prediction
        (probability of class 1, or the regression value), largest magnitude first; `bias`
        is the prediction before any split. `bias + sum(dfc.values())` is the prediction.

        Example:
            >>> for p in est.experimental_predict_with_explanations(input_fn):
            ...     p["probabilities"][1], p["bias"] + sum(p["dfc"].values())
        """
        if not self._center_bias:
            raise ValueError(
                "center_bias must be enabled during estimator instantiation when using "
                "experimental_predict_with_explanations."
            )
        if self._head.logits_dimension > 1:
            raise ValueError(
                "experimental_predict_with_explanations does not yet support multi-class "
                "classification and multi-label regression."
            )
        if not self._is_classification and getattr(self._head, "_inverse_link_fn", None):
            raise ValueError(
                "For now only identity inverse_link_fn in regression_head is supported for "
                "experimental_predict_with_explanations."
            )
        explainer = Estimator(self._model_fn_for(explanations=True), self.model_dir, self.config)
        if predict_keys is not None:
            predict_keys = list({*predict_keys, LOGITS_PATH_KEY, PATH_FEATURE_IDS_KEY})
        predictions = explainer.predict(
            input_fn, predict_keys=predict_keys, hooks=hooks, checkpoint_path=checkpoint_path
        )
        for prediction in predictions:
            bias, dfc = explanations.directional_contributions(
                prediction.pop(LOGITS_PATH_KEY),
                prediction.pop(PATH_FEATURE_IDS_KEY),
                self._layout.names,
                self._is_classification,
            )
            prediction["bias"], prediction["dfc"] = bias, dfc
            yield prediction


class BoostedTreesClassifier(_BoostedTreesBase):
    """A gradient-boosted-trees classifier, as `tf.estimator.BoostedTreesClassifier` (2.8).

    Trees grow one layer per `n_batches_per_layer` batches; training stops by itself once
    `n_trees` trees of depth `max_depth` are grown. Numeric columns are bucketized by
    quantiles of the first `n_batches_per_layer` batches (`1/quantile_sketch_epsilon`
    buckets). The random seed is RunConfig's `tf_random_seed` (there is no seed argument).

    Example:
        >>> columns = [tf.feature_column.numeric_column("x0"),
        ...            tf.feature_column.numeric_column("x1")]
        >>> est = BoostedTreesClassifier(columns, n_batches_per_layer=1, n_trees=50, max_depth=4)
        >>> est.train(input_fn, max_steps=1000)   # stops after 50 trees x 4 layers
        >>> est.evaluate(input_fn, steps=1)["accuracy"]
    """

    def __init__(
        self,
        feature_columns: Any,
        n_batches_per_layer: int,
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
        center_bias: bool = False,
        pruning_mode: str = "none",
        quantile_sketch_epsilon: float = 0.01,
        train_in_memory: bool = False,
    ) -> None:
        if n_classes > 2 and center_bias:
            raise ValueError("center_bias not yet support with n_classes > 2.")
        hparams = _hparams(
            n_trees,
            max_depth,
            learning_rate,
            l1_regularization,
            l2_regularization,
            tree_complexity,
            min_node_weight,
            center_bias,
            pruning_mode,
            quantile_sketch_epsilon,
        )
        # tf.estimator 2.8's heads: mean loss over the batch for two classes, and over the
        # weights for more.
        reduction = "sum_over_batch_size"
        head = canned_model_fn.classification_head(
            n_classes, weight_column, label_vocabulary, reduction
        )
        super().__init__(
            feature_columns,
            n_batches_per_layer,
            head,
            model_dir,
            config,
            hparams,
            True,
            train_in_memory,
        )


class BoostedTreesRegressor(_BoostedTreesBase):
    """A gradient-boosted-trees regressor, as `tf.estimator.BoostedTreesRegressor` (2.8).

    Example:
        >>> est = BoostedTreesRegressor(columns, n_batches_per_layer=4, n_trees=100)
        >>> est.train(input_fn)   # stops after n_trees x max_depth layers
    """

    def __init__(
        self,
        feature_columns: Any,
        n_batches_per_layer: int,
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
        center_bias: bool = False,
        pruning_mode: str = "none",
        quantile_sketch_epsilon: float = 0.01,
        train_in_memory: bool = False,
    ) -> None:
        hparams = _hparams(
            n_trees,
            max_depth,
            learning_rate,
            l1_regularization,
            l2_regularization,
            tree_complexity,
            min_node_weight,
            center_bias,
            pruning_mode,
            quantile_sketch_epsilon,
        )
        head = RegressionHead(label_dimension, weight_column, "sum_over_batch_size")
        super().__init__(
            feature_columns,
            n_batches_per_layer,
            head,
            model_dir,
            config,
            hparams,
            False,
            train_in_memory,
        )


class BoostedTreesEstimator(_BoostedTreesBase):
    """Gradient-boosted trees under any head, as `tf.estimator.BoostedTreesEstimator` (2.8).

    Example:
        >>> est = BoostedTreesEstimator(columns, n_batches_per_layer=1,
        ...                             head=RegressionHead(), n_trees=20)
    """

    def __init__(
        self,
        feature_columns: Any,
        n_batches_per_layer: int,
        head: Any,
        model_dir: str | os.PathLike | None = None,
        weight_column: Any = None,
        n_trees: int = 100,
        max_depth: int = 6,
        learning_rate: float = 0.1,
        l1_regularization: float = 0.0,
        l2_regularization: float = 0.0,
        tree_complexity: float = 0.0,
        min_node_weight: float = 0.0,
        config: RunConfig | None = None,
        center_bias: bool = False,
        pruning_mode: str = "none",
        quantile_sketch_epsilon: float = 0.01,
    ) -> None:
        del weight_column  # as in 2.8: the head's own weight_column is the one used
        hparams = _hparams(
            n_trees,
            max_depth,
            learning_rate,
            l1_regularization,
            l2_regularization,
            tree_complexity,
            min_node_weight,
            center_bias,
            pruning_mode,
            quantile_sketch_epsilon,
        )
        is_classification = isinstance(head, (BinaryClassHead, MultiClassHead))
        super().__init__(
            feature_columns,
            n_batches_per_layer,
            head,
            model_dir,
            config,
            hparams,
            is_classification,
        )
