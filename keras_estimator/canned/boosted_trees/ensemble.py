"""The tree ensemble: complete binary trees held in variables, and how examples walk them.

TensorFlow 2.21 registers the `BoostedTrees*` ops but no kernel for any of them
(`tf.raw_ops.BoostedTreesPredict` fails with "no registered kernels"), so the ensemble is
plain tensors here. Tree `t` stores node `n`'s children at `2n + 1` (left: bucket <=
threshold) and `2n + 2`; `feature[t, n] == -1` marks a leaf. `value[t, n]` is the node's
logit as a leaf, kept when it is split (tf.estimator 2.8's `original_leaf`): a child's
value is its parent's plus `learning_rate` times its contribution, so an example's logits
are the sum over trees of the value where it ends. Tree 0's root holds the centered bias.
"""

from __future__ import annotations

import tensorflow as tf

_V1 = tf.compat.v1


def num_nodes(max_depth: int) -> int:
    return (1 << (max_depth + 1)) - 1


class TreeEnsemble:
    """The ensemble's variables (`boosted_trees/...`) and its growth counters."""

    def __init__(self, n_trees: int, max_depth: int, logits_dimension: int):
        self.n_trees, self.max_depth, self.logits_dimension = n_trees, max_depth, logits_dimension
        nodes = num_nodes(max_depth)

        def variable(name, shape, dtype, value=0):
            return _V1.get_variable(
                name, shape, dtype, _V1.constant_initializer(value), trainable=False
            )

        self.feature = variable("ensemble/node_feature", [n_trees, nodes], tf.int32, -1)
        self.threshold = variable("ensemble/node_threshold", [n_trees, nodes], tf.int32)
        self.value = variable("ensemble/node_value", [n_trees, nodes, logits_dimension], tf.float32)
        self.gain = variable("ensemble/node_gain", [n_trees, nodes], tf.float32)
        # Growth: the tree being grown, its layers so far, and tf.estimator 2.8's counters.
        self.tree_index = variable("ensemble/tree_index", [], tf.int64)
        self.layer_index = variable("ensemble/layer_index", [], tf.int64)
        self.num_finalized_trees = variable("ensemble/num_finalized_trees", [], tf.int64)
        self.num_attempted_layers = variable("ensemble/num_attempted_layers", [], tf.int64)

    def grown_trees(self) -> tf.Tensor:
        """How many trees may hold values: those finished and the one growing."""
        return tf.minimum(tf.cast(self.tree_index, tf.int32) + 1, self.n_trees)

    def walk(self, buckets: tf.Tensor, num_trees: tf.Tensor | None = None) -> tf.Tensor:
        """[batch, trees, depth + 1] node ids along each example's path in the first trees.

        Only `num_trees` trees are walked (all by default): the others are empty.
        """
        count = self.n_trees if num_trees is None else num_trees
        per_tree = num_nodes(self.max_depth)
        feature = tf.reshape(self.feature.read_value()[:count], [-1])
        threshold = tf.reshape(self.threshold.read_value()[:count], [-1])
        offset = tf.range(count) * per_tree
        node = tf.zeros([tf.shape(buckets)[0], count], tf.int32)
        path = [node]
        for _ in range(self.max_depth):
            at = node + offset
            split_feature = tf.gather(feature, at)
            bucket = tf.gather(buckets, tf.maximum(split_feature, 0), batch_dims=1)
            child = tf.where(bucket <= tf.gather(threshold, at), 2 * node + 1, 2 * node + 2)
            node = tf.where(split_feature >= 0, child, node)
            path.append(node)
        return tf.stack(path, axis=-1)

    def node_values(self, nodes: tf.Tensor) -> tf.Tensor:
        """[batch, trees, ..., logits]: the value of `nodes` ([batch, trees, ...])."""
        count = tf.shape(nodes)[1]
        values = tf.reshape(self.value.read_value()[:count], [-1, self.logits_dimension])
        offset = tf.range(count) * num_nodes(self.max_depth)
        offset = tf.reshape(offset, [1, -1] + [1] * (nodes.shape.rank - 2))
        return tf.gather(values, nodes + offset)

    def logits(self, leaves: tf.Tensor) -> tf.Tensor:
        """[batch, logits]: the sum over trees of the leaves examples reach ([batch, trees])."""
        return tf.reduce_sum(self.node_values(leaves), axis=1)

    def explanation_paths(self, buckets: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
        """Per example, logits after each step of every tree's path, and its split feature.

        Returns `([batch, 1 + trees * depth, logits], [batch, trees * depth])`: the first
        logits are the sum of the roots (the bias), each step moves one tree one node down
        (a step at a leaf changes nothing; its feature is -1). What tf.estimator 2.8's
        BoostedTreesExampleDebugOutputs gave, for directional feature contributions.
        """
        path = self.walk(buckets)  # [batch, trees, depth + 1]
        values = self.node_values(path)  # [batch, trees, depth + 1, logits]
        steps = values[:, :, 1:] - values[:, :, :-1]
        batch = tf.shape(buckets)[0]
        start = tf.reduce_sum(values[:, :, 0], axis=1, keepdims=True)
        deltas = tf.reshape(steps, [batch, -1, self.logits_dimension])
        logits_path = tf.concat([start, start + tf.cumsum(deltas, axis=1)], axis=1)
        trees = tf.zeros_like(path[:, :, :-1]) + tf.range(self.n_trees)[tf.newaxis, :, tf.newaxis]
        parents = tf.stack([trees, path[:, :, :-1]], axis=-1)
        split = tf.gather_nd(self.feature.read_value(), parents)
        moved = tf.not_equal(path[:, :, 1:], path[:, :, :-1])
        feature_ids = tf.reshape(tf.where(moved, split, -1), [batch, -1])
        return logits_path, feature_ids
