"""Bucket boundaries of numeric features, learned from the first batches of training.

tf.estimator 2.8 fed `n_batches_per_layer` batches to a quantile-sketch resource before
growing the first layer. TensorFlow 2.21 ships no kernel for that resource, so the values
are kept in a fixed-size sample instead: each value gets a pseudo-random key and the
`capacity` smallest keys stay (a uniform sample without replacement; every value while the
data fits). The boundaries are the sample's quantiles `1/q, ..., (q-1)/q` per feature.
The sample lives in variables, so training that stops mid-way resumes it from a checkpoint.
"""

from __future__ import annotations

import tensorflow as tf

_V1 = tf.compat.v1
SAMPLE_CAPACITY = 20_000


class QuantileSample:
    """The sample and the boundaries, as checkpointed variables under `boosted_trees/`."""

    def __init__(
        self,
        num_features: int,
        num_quantiles: int,
        with_sample: bool = True,
        capacity: int = SAMPLE_CAPACITY,
    ):
        self.num_quantiles = num_quantiles
        self.capacity = capacity
        zeros = _V1.zeros_initializer()
        self.boundaries = _V1.get_variable(
            "bucket_boundaries",
            [num_features, num_quantiles - 1],
            tf.float32,
            zeros,
            trainable=False,
        )
        self.ready = _V1.get_variable(
            "are_boundaries_ready", [], tf.bool, _V1.constant_initializer(False), trainable=False
        )
        if not with_sample:  # evaluation and serving need only the boundaries
            return
        self.values = _V1.get_variable(
            "quantile_sample/values", [capacity, num_features], tf.float32, zeros, trainable=False
        )
        self.keys = _V1.get_variable(
            "quantile_sample/keys",
            [capacity],
            tf.float32,
            _V1.constant_initializer(float("inf")),
            trainable=False,
        )
        self.batches = _V1.get_variable(
            "quantile_sample/batches", [], tf.int64, zeros, trainable=False
        )

    def add(self, values: tf.Tensor) -> tf.Operation:
        """Adds a [batch, features] batch; returns the op."""
        seed = tf.stack([self.batches.read_value(), tf.constant(8, tf.int64)])
        new_keys = tf.random.stateless_uniform(tf.shape(values)[:1], seed, dtype=tf.float32)
        keys = tf.concat([self.keys.read_value(), new_keys], 0)
        candidates = tf.concat([self.values.read_value(), values], 0)
        _, kept = tf.math.top_k(-keys, k=self.capacity, sorted=False)
        return tf.group(
            self.keys.assign(tf.gather(keys, kept)),
            self.values.assign(tf.gather(candidates, kept)),
            self.batches.assign_add(1),
        )

    def finalize(self) -> tf.Operation:
        """Sets the boundaries from the sample and marks them ready."""
        filled = tf.math.is_finite(self.keys.read_value())
        count = tf.reduce_sum(tf.cast(filled, tf.int32))
        # Unfilled rows sort last (+inf), so the first `count` sorted rows are the sample.
        padded = tf.where(filled[:, tf.newaxis], self.values.read_value(), float("inf"))
        ordered = tf.sort(padded, axis=0)
        levels = tf.range(1, self.num_quantiles, dtype=tf.int32)
        rows = tf.minimum(levels * count // self.num_quantiles, tf.maximum(count - 1, 0))
        boundaries = tf.transpose(tf.gather(ordered, rows))
        with tf.control_dependencies([self.boundaries.assign(boundaries)]):
            return tf.group(
                self.ready.assign(True),
                # The sample has done its work; keep the checkpoint small from here on.
                self.keys.assign(tf.fill([self.capacity], float("inf"))),
            )
