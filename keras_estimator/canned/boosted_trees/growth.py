"""Growing the ensemble one layer at a time from accumulated gradient statistics.

What tf.estimator 2.8 did with BoostedTreesAggregateStats, ...CalculateBestFeatureSplitV2,
...UpdateEnsembleV2 and ...CenterBias (kernels TensorFlow 2.21 no longer has), in plain
TensorFlow ops: the gradients and hessians of `n_batches_per_layer` batches are summed per
(node of the layer, feature, bucket) and averaged over the batches; each node then takes the
split `bucket <= threshold` with the largest gain

    gain = s(G_left, H_left) + s(G_right, H_right) - s(G, H) - tree_complexity,
    s(g, h) = shrink_l1(g)^2 / (h + l2),

among splits leaving at least `min_node_weight` of hessian on each side; its children get
the parent's value plus `learning_rate * -shrink_l1(G) / (H + l2)`. For several logits the
hessian is taken diagonal and the scores add up.
"""

from __future__ import annotations

import dataclasses

import tensorflow as tf

from keras_estimator.canned.boosted_trees.ensemble import TreeEnsemble

_V1 = tf.compat.v1
_CENTER_BIAS_TOLERANCE = 0.01  # tf.estimator 2.8's kernel stops centering below this step


@dataclasses.dataclass(frozen=True)
class TreeHParams:
    """tf.estimator 2.8's tree hyperparameters (`_TreeHParams`)."""

    n_trees: int
    max_depth: int
    learning_rate: float
    l1: float
    l2: float
    tree_complexity: float
    min_node_weight: float
    center_bias: bool
    pruning_mode: str
    quantile_sketch_epsilon: float


def _shrink(g: tf.Tensor, l1: float) -> tf.Tensor:
    return tf.sign(g) * tf.nn.relu(tf.abs(g) - l1) if l1 > 0 else g


def _score(g: tf.Tensor, h: tf.Tensor, hp: TreeHParams) -> tf.Tensor:
    return tf.reduce_sum(tf.square(_shrink(g, hp.l1)) / (h + hp.l2 + 1e-12), axis=-1)


def _leaf_step(g: tf.Tensor, h: tf.Tensor, hp: TreeHParams) -> tf.Tensor:
    return -_shrink(g, hp.l1) / (h + hp.l2 + 1e-12)


class LayerGrower:
    """Accumulators for one layer and the ops that grow the current tree from them."""

    def __init__(
        self,
        ensemble: TreeEnsemble,
        hparams: TreeHParams,
        num_features: int,
        num_buckets: int,
        n_batches_per_layer: int,
    ):
        self.ensemble, self.hparams = ensemble, hparams
        self.num_features, self.num_buckets = num_features, num_buckets
        self.n_batches = n_batches_per_layer
        self.width = 1 << max(hparams.max_depth - 1, 0)  # nodes in the widest layer split
        dims = ensemble.logits_dimension
        zeros = _V1.zeros_initializer()
        self.stats = _V1.get_variable(
            "growing/stats",
            [self.width, num_features, num_buckets, 2 * dims],
            tf.float32,
            zeros,
            trainable=False,
        )
        self.batches = _V1.get_variable("growing/batches", [], tf.int64, zeros, trainable=False)
        self.bias_stats = _V1.get_variable(
            "growing/bias_stats", [2 * dims], tf.float32, zeros, trainable=False
        )
        self.center_bias_needed = _V1.get_variable(
            "center_bias_needed",
            [],
            tf.bool,
            _V1.constant_initializer(hparams.center_bias),
            trainable=False,
        )

    # ---- statistics ----

    def _layer_start(self) -> tf.Tensor:
        one = tf.constant(1, tf.int64)
        return tf.cast(tf.bitwise.left_shift(one, self.ensemble.layer_index) - 1, tf.int32)

    def accumulate(
        self, buckets: tf.Tensor, nodes: tf.Tensor, gradients: tf.Tensor, hessians: tf.Tensor
    ) -> tf.Operation:
        """Adds one batch's statistics; `nodes` [batch] is each example's node in the tree."""
        position = nodes - self._layer_start()
        in_layer = (position >= 0) & (position < self.width)
        f, b = self.num_features, self.num_buckets
        cells = (position[:, tf.newaxis] * f + tf.range(f)[tf.newaxis, :]) * b + buckets
        cells = tf.where(in_layer[:, tf.newaxis], cells, self.width * f * b)  # outside: dropped
        stats = tf.concat([gradients, hessians], axis=1)
        stats = tf.broadcast_to(stats[:, tf.newaxis, :], [tf.shape(stats)[0], f, stats.shape[1]])
        summed = tf.math.unsorted_segment_sum(stats, cells, self.width * f * b + 1)[:-1]
        return tf.group(
            self.stats.assign_add(tf.reshape(summed, self.stats.shape)),
            self.batches.assign_add(1),
        )

    def accumulate_bias(self, gradients: tf.Tensor, hessians: tf.Tensor) -> tf.Operation:
        stats = tf.concat([tf.reduce_sum(gradients, 0), tf.reduce_sum(hessians, 0)], axis=0)
        return tf.group(self.bias_stats.assign_add(stats), self.batches.assign_add(1))

    def layer_ready(self) -> tf.Tensor:
        return self.batches.read_value() >= self.n_batches

    def _reset(self) -> tf.Operation:
        return tf.group(
            self.stats.assign(tf.zeros_like(self.stats)),
            self.bias_stats.assign(tf.zeros_like(self.bias_stats)),
            self.batches.assign(0),
        )

    # ---- center bias ----

    def center_bias(self) -> tf.Operation:
        """One Newton step of the bias (tree 0's root); stops centering once it is small."""
        dims = self.ensemble.logits_dimension
        mean = self.bias_stats.read_value() / tf.cast(self.batches.read_value(), tf.float32)
        step = _leaf_step(mean[:dims], mean[dims:], self.hparams)
        update = self.ensemble.value.scatter_nd_add([[0, 0]], step[tf.newaxis])
        done = tf.reduce_all(tf.abs(step) < _CENTER_BIAS_TOLERANCE)
        with tf.control_dependencies([update]):
            keep_going = self.center_bias_needed.assign(tf.logical_not(done))
        with tf.control_dependencies([keep_going]):
            return self._reset()

    # ---- splits ----

    def grow_layer(self) -> tf.Operation:
        """Splits the current layer's nodes from the averaged statistics; may end the tree."""
        hp, ens = self.hparams, self.ensemble
        dims = ens.logits_dimension
        stats = self.stats.read_value() / tf.cast(self.batches.read_value(), tf.float32)
        left = tf.cumsum(stats, axis=2)[:, :, :-1]  # [width, features, thresholds, 2 dims]
        total = tf.reduce_sum(stats[:, :1], axis=2)  # every example has one bucket per feature
        right = total[:, :, tf.newaxis] - left
        g_l, h_l, g_r, h_r = (
            left[..., :dims],
            left[..., dims:],
            right[..., :dims],
            right[..., dims:],
        )
        parent = _score(total[:, 0, :dims], total[:, 0, dims:], hp)
        gains = _score(g_l, h_l, hp) + _score(g_r, h_r, hp) - parent[:, None, None]
        gains -= hp.tree_complexity
        weight_l, weight_r = tf.reduce_sum(h_l, -1), tf.reduce_sum(h_r, -1)
        valid = (weight_l > 0) & (weight_r > 0)
        valid &= (weight_l >= hp.min_node_weight) & (weight_r >= hp.min_node_weight)
        flat_gains = tf.reshape(tf.where(valid, gains, -float("inf")), [self.width, -1])
        best = tf.argmax(flat_gains, axis=1, output_type=tf.int32)
        best_gain = tf.reduce_max(flat_gains, axis=1)
        thresholds = self.num_buckets - 1
        best_feature, best_threshold = best // thresholds, best % thresholds
        split = tf.math.is_finite(best_gain)
        if hp.pruning_mode == "pre":
            split &= best_gain > 0
        split &= tf.range(self.width) < tf.bitwise.left_shift(1, tf.cast(ens.layer_index, tf.int32))

        def chosen(x):  # [width, features, thresholds, dims] -> [width, dims] at the best split
            x = tf.reshape(x, [self.width, -1, dims])
            return tf.gather(x, best, axis=1, batch_dims=1)

        tree = tf.cast(ens.tree_index, tf.int32)
        node = self._layer_start() + tf.range(self.width)
        node_at = tf.stack([tf.fill([self.width], tree), node], axis=1)
        parent_value = tf.gather_nd(ens.value.read_value(), node_at)
        step_l = hp.learning_rate * _leaf_step(chosen(g_l), chosen(h_l), hp)
        step_r = hp.learning_rate * _leaf_step(chosen(g_r), chosen(h_r), hp)
        keep = split[:, tf.newaxis]
        old_feature = tf.gather_nd(ens.feature.read_value(), node_at)
        old_threshold = tf.gather_nd(ens.threshold.read_value(), node_at)
        old_gain = tf.gather_nd(ens.gain.read_value(), node_at)
        children_at = tf.concat(
            [
                tf.stack([node_at[:, 0], 2 * node + 1], 1),
                tf.stack([node_at[:, 0], 2 * node + 2], 1),
            ],
            0,
        )
        old_children = tf.gather_nd(ens.value.read_value(), children_at)
        new_children = tf.concat([parent_value + step_l, parent_value + step_r], 0)
        updates = tf.group(
            ens.feature.scatter_nd_update(node_at, tf.where(split, best_feature, old_feature)),
            ens.threshold.scatter_nd_update(
                node_at, tf.where(split, best_threshold, old_threshold)
            ),
            ens.gain.scatter_nd_update(node_at, tf.where(split, best_gain, old_gain)),
            ens.value.scatter_nd_update(
                children_at, tf.where(tf.concat([keep, keep], 0), new_children, old_children)
            ),
        )
        with tf.control_dependencies([updates]):
            layers = ens.layer_index.assign_add(1)
            attempted = ens.num_attempted_layers.assign_add(1)
        with tf.control_dependencies([layers, attempted]):
            tree_done = (layers >= hp.max_depth) | tf.logical_not(tf.reduce_any(split))
            finish = tf.cond(tree_done, self._finalize_tree, tf.no_op)
        with tf.control_dependencies([finish]):
            return self._reset()

    def _finalize_tree(self) -> tf.Operation:
        ens = self.ensemble
        ops = [self._post_prune()] if self.hparams.pruning_mode == "post" else []
        with tf.control_dependencies(ops):
            return tf.group(
                ens.tree_index.assign_add(1),
                ens.num_finalized_trees.assign_add(1),
                ens.layer_index.assign(0),
            )

    def _post_prune(self) -> tf.Operation:
        """Turns back into leaves, bottom up, the splits of negative gain with leaf children."""
        ens = self.ensemble
        tree = tf.cast(ens.tree_index, tf.int32)
        feature = ens.feature.read_value()[tree]
        gain = ens.gain.read_value()[tree]
        pruned = tf.zeros_like(feature, tf.bool)
        for depth in reversed(range(self.hparams.max_depth)):
            first, count = (1 << depth) - 1, 1 << depth
            nodes = tf.range(first, first + count)
            leaf_children = (tf.gather(feature, 2 * nodes + 1) < 0) & (
                tf.gather(feature, 2 * nodes + 2) < 0
            )
            here = feature[first : first + count]
            prune = (here >= 0) & leaf_children & (gain[first : first + count] < 0)
            feature = tf.tensor_scatter_nd_update(
                feature, nodes[:, tf.newaxis], tf.where(prune, -1, here)
            )
            pruned = tf.tensor_scatter_nd_update(pruned, nodes[:, tf.newaxis], prune)
        return tf.group(
            ens.feature.scatter_nd_update([[tree]], feature[tf.newaxis]),
            ens.gain.scatter_nd_update([[tree]], tf.where(pruned, 0.0, gain)[tf.newaxis]),
        )
