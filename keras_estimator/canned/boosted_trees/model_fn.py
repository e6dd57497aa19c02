"""The BoostedTrees model_fn: bucketize, walk the trees, grow them a layer per step group.

A training step is one of (as in tf.estimator 2.8's `_bt_model_fn`): add the batch to the
quantile sample (numeric columns, until `n_batches_per_layer` batches are in); accumulate
the statistics for centering the bias (`center_bias=True`, until centered); accumulate the
statistics of the current layer and, every `n_batches_per_layer` batches, grow it. Once
`n_trees` trees are final, steps change nothing and a hook stops training.
"""

from __future__ import annotations

from typing import Any

import tensorflow as tf

from keras_estimator.canned.boosted_trees import features as features_lib
from keras_estimator.canned.boosted_trees.ensemble import TreeEnsemble
from keras_estimator.canned.boosted_trees.growth import LayerGrower, TreeHParams
from keras_estimator.canned.boosted_trees.quantiles import QuantileSample
from keras_estimator.spec.estimator_spec import EstimatorSpec
from keras_estimator.spec.mode_keys import ModeKeys

_V1 = tf.compat.v1
SCOPE = "boosted_trees"
# Prediction keys of the explanations model_fn (read by `experimental_predict_with_explanations`).
LOGITS_PATH_KEY = "_logits_path"
PATH_FEATURE_IDS_KEY = "_path_feature_ids"


class StopAtAttemptsHook(tf.compat.v1.train.SessionRunHook):
    """Stops training once `n_trees` trees are final (or twice the layers were attempted)."""

    def __init__(
        self,
        num_finalized_trees: tf.Tensor,
        num_attempted_layers: tf.Tensor,
        max_trees: int,
        max_depth: int,
    ):
        self._tensors = [num_finalized_trees, num_attempted_layers]
        self._max_trees, self._max_depth = max_trees, max_depth

    def before_run(self, run_context: Any) -> Any:
        return _V1.train.SessionRunArgs(self._tensors)

    def after_run(self, run_context: Any, run_values: Any) -> None:
        finalized, attempted = run_values.results
        if finalized >= self._max_trees or attempted > 2 * self._max_trees * self._max_depth:
            run_context.request_stop()


def _gradients_and_hessians(loss: tf.Tensor, logits: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
    """d loss / d logits and its diagonal second derivative, per example."""
    gradients = tf.gradients(loss, logits)[0]
    columns = []
    for k in range(logits.shape[-1]):
        second = tf.gradients(gradients[:, k], logits)[0]
        if second is None:  # the loss is linear in this logit
            second = tf.zeros_like(logits)
        columns.append(second[:, k])
    return gradients, tf.stack(columns, axis=1)


def _train_op(
    loss, logits, leaves, buckets, raw, layout, ensemble, sample, grower, hparams
) -> tf.Operation:
    gradients, hessians = _gradients_and_hessians(loss, logits)

    def add_to_quantiles():
        with tf.control_dependencies([sample.add(features_lib.numeric_values(raw, layout))]):
            full = sample.batches.read_value() >= grower.n_batches
            return tf.cond(full, sample.finalize, tf.no_op)

    def center_bias():
        with tf.control_dependencies([grower.accumulate_bias(gradients, hessians)]):
            return tf.cond(grower.layer_ready(), grower.center_bias, tf.no_op)

    def grow():
        nodes = tf.gather(leaves, tf.cast(ensemble.tree_index, tf.int32), axis=1)
        with tf.control_dependencies([grower.accumulate(buckets, nodes, gradients, hessians)]):
            return tf.cond(grower.layer_ready(), grower.grow_layer, tf.no_op)

    def train():
        if hparams.center_bias:
            return tf.cond(grower.center_bias_needed.read_value(), center_bias, grow)
        return grow()

    def train_after_quantiles():
        if sample is None:
            return train()
        return tf.cond(sample.ready.read_value(), train, add_to_quantiles)

    not_done = ensemble.num_finalized_trees.read_value() < hparams.n_trees
    return tf.group(tf.cond(not_done, train_after_quantiles, tf.no_op), name="grow_op")


def boosted_trees_model_fn(
    features: dict,
    labels: Any,
    mode: str,
    head: Any,
    layout: features_lib.FeatureLayout,
    hparams: TreeHParams,
    n_batches_per_layer: int,
    explanations: bool = False,
) -> EstimatorSpec:
    """The EstimatorSpec of a BoostedTrees estimator in `mode`."""
    with _V1.variable_scope(SCOPE):
        ensemble = TreeEnsemble(hparams.n_trees, hparams.max_depth, head.logits_dimension)
        sample = None
        if layout.numeric_ids:
            sample = QuantileSample(
                len(layout.numeric_ids),
                int(1.0 / hparams.quantile_sketch_epsilon),
                with_sample=mode == ModeKeys.TRAIN,
            )
        raw = features_lib.raw_features(features, layout)
        boundaries = sample.boundaries.read_value() if sample is not None else None
        buckets = features_lib.bucketize(raw, layout, boundaries)
        leaves = ensemble.walk(buckets, ensemble.grown_trees())[:, :, -1]
        logits = ensemble.logits(leaves)
        if mode != ModeKeys.TRAIN:
            spec = head.create_estimator_spec(features, mode, logits, labels)
            if explanations:
                logits_path, feature_ids = ensemble.explanation_paths(buckets)
                spec.predictions[LOGITS_PATH_KEY] = logits_path
                spec.predictions[PATH_FEATURE_IDS_KEY] = feature_ids
            return spec
        grower = LayerGrower(
            ensemble, hparams, layout.num_features, layout.max_buckets, n_batches_per_layer
        )

    def train_op_fn(loss: tf.Tensor) -> tf.Operation:
        with _V1.name_scope(SCOPE):
            return _train_op(
                loss, logits, leaves, buckets, raw, layout, ensemble, sample, grower, hparams
            )

    spec = head.create_estimator_spec(features, mode, logits, labels, train_op_fn=train_op_fn)
    with tf.control_dependencies([spec.train_op]):
        finalized = ensemble.num_finalized_trees.read_value()
        attempted = ensemble.num_attempted_layers.read_value()
    _V1.summary.scalar("ensemble/num_trees", ensemble.tree_index.read_value())
    _V1.summary.scalar("ensemble/num_finalized_trees", finalized)
    _V1.summary.scalar("ensemble/num_attempted_layers", attempted)
    stop = StopAtAttemptsHook(finalized, attempted, hparams.n_trees, hparams.max_depth)
    return spec._replace(training_hooks=tuple(spec.training_hooks) + (stop,))
