"""The k-means graph of one traced step: its variables, distances, initialization and updates.

TensorFlow 2.21 still ships the kernels tf.estimator 2.15's KMeans ran on
(`NearestNeighbors`, `KmeansPlusPlusInitialization`); this builds the same computation on
resource variables, with the variable names 2.15 checkpointed: `clusters` (its shape grows
from [0] while centers are chosen), `initialized`, and for mini-batch training `Variable`
(points counted per center), `clusters_updated` and `update_in_steps` (when an iteration
spans several steps). 2.15 chose the initial centers in a session hook before training;
here the training step does it while `initialized` is false, so that step reads a batch and
leaves the global step as it is, as the hook did.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tensorflow as tf

SQUARED_EUCLIDEAN_DISTANCE = "squared_euclidean"
COSINE_DISTANCE = "cosine"
RANDOM_INIT = "random"
KMEANS_PLUS_PLUS_INIT = "kmeans_plus_plus"
CLUSTERS_VAR_NAME = "clusters"


def _l2_normalize(x: tf.Tensor) -> tf.Tensor:
    return tf.math.l2_normalize(x, axis=1)


class KMeansGraph:
    """The variables and ops of k-means over one batch of points ([n, d] float).

    Args:
        points: the batch, [n, d].
        num_clusters: k, a number or scalar tensor (ignored when `initial_clusters` holds
            the centers).
        initial_clusters: `"random"`, `"kmeans_plus_plus"`, a callable `f(inputs, k)`
            returning up to k centers from `inputs` (a list of one [n, d] tensor), or the
            initial centers themselves ([k, d]).
        distance_metric: `"squared_euclidean"` or `"cosine"`.
        use_mini_batch: mini-batch updates (else one full Lloyd iteration per step).
        mini_batch_steps_per_iteration: steps accumulated before the centers are synced.
        seed: the seed of the random choices (with the graph's seed, as 2.15 paired them).
        kmeans_plus_plus_num_retries: extra samples per k-means++ center.

    Example:
        >>> graph = KMeansGraph(points, 3, "random", "squared_euclidean", True, 1, 1, 2)
        >>> train_op, was_initialized, loss = graph.training_step()
    """

    def __init__(
        self,
        points: tf.Tensor,
        num_clusters: Any,
        initial_clusters: Any,
        distance_metric: str,
        use_mini_batch: bool,
        mini_batch_steps_per_iteration: int,
        seed: int | None,
        kmeans_plus_plus_num_retries: int,
    ) -> None:
        self._points = tf.convert_to_tensor(points)
        self._initial = initial_clusters
        if isinstance(initial_clusters, str) or callable(initial_clusters):
            self._k = tf.convert_to_tensor(num_clusters)
        else:
            self._initial = tf.convert_to_tensor(initial_clusters, self._points.dtype)
            self._k = tf.shape(self._initial)[0]
        self._metric = distance_metric
        self._mini_batch = use_mini_batch
        self._steps_per_iteration = mini_batch_steps_per_iteration
        # As tf.estimator 2.15: the graph-level half of the seed pair (RunConfig's
        # tf_random_seed when set) is the op seed of every random choice.
        self._seed = tf.compat.v1.random.get_seed(seed)[0]
        self._retries = kmeans_plus_plus_num_retries
        self._create_variables()

    # -- variables ---------------------------------------------------------------
    def _create_variables(self) -> None:
        dtype = self._points.dtype

        def growing(name: str) -> tf.Variable:
            # Empty until the first centers are chosen, then [k, d]: the shape is unknown.
            return tf.Variable(
                tf.zeros([0], dtype), name=name, shape=tf.TensorShape(None), trainable=False
            )

        self.clusters = growing(CLUSTERS_VAR_NAME)
        self.initialized = tf.Variable(False, name="initialized", trainable=False)
        self.update_in_steps: tf.Variable | None = None
        self.counts: tf.Variable | None = None
        self.clusters_updated = self.clusters
        if self._mini_batch and self._steps_per_iteration > 1:
            self.clusters_updated = growing("clusters_updated")
            self.update_in_steps = tf.Variable(
                tf.constant(self._steps_per_iteration, tf.int64),
                name="update_in_steps",
                trainable=False,
            )
            self.counts = tf.Variable(
                tf.zeros(tf.reshape(self._k, [1]), tf.int64), name="Variable", trainable=False
            )
        elif self._mini_batch:
            self.counts = tf.Variable(
                tf.ones(tf.reshape(self._k, [1]), tf.int64), name="Variable", trainable=False
            )

    def _centers_normalized(self) -> bool:
        """Whether the stored centers are kept l2-normalized (cosine, synced centers)."""
        return self._metric == COSINE_DISTANCE and (
            not self._mini_batch or self._steps_per_iteration > 1
        )

    # -- inference ---------------------------------------------------------------
    def _inputs(self) -> tf.Tensor:
        if self._metric == COSINE_DISTANCE:
            return _l2_normalize(self._points)
        return self._points

    def _centers(self) -> tf.Tensor:
        centers = self.clusters.read_value()
        if self._metric == COSINE_DISTANCE and not self._centers_normalized():
            centers = _l2_normalize(centers)
        return centers

    def infer(self) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
        """(all_distances [n, k], distance to the nearest center [n], its index [n]).

        all_distances are squared Euclidean (or cosine) distances; the nearest distance is
        squared Euclidean (cosine: half the squared Euclidean distance of unit vectors).
        """
        inputs, centers = self._inputs(), self._centers()
        if self._metric == SQUARED_EUCLIDEAN_DISTANCE:
            all_distances = (
                tf.reduce_sum(tf.square(inputs), 1, keepdims=True)
                - 2 * tf.matmul(inputs, centers, transpose_b=True)
                + tf.transpose(tf.reduce_sum(tf.square(centers), 1, keepdims=True))
            )
        else:
            all_distances = 1 - tf.matmul(inputs, centers, transpose_b=True)
        indices, distances = tf.raw_ops.NearestNeighbors(
            points=inputs, centers=centers, k=tf.constant(1, tf.int64)
        )
        if self._metric == COSINE_DISTANCE:
            distances *= 0.5
        return all_distances, tf.squeeze(distances, [-1]), tf.squeeze(indices, [-1])

    # -- training ----------------------------------------------------------------
    def training_step(self) -> tuple[tf.Operation, tf.Tensor, tf.Tensor]:
        """(the step's op, whether the centers were initialized before it, its loss).

        Before initialization the step chooses centers (loss 0); after, it runs one
        mini-batch or full-batch update, its loss the summed nearest distances.
        """
        was_initialized = self.initialized.read_value()

        def train() -> tf.Tensor:
            with tf.control_dependencies([self._sync_op()] if self._mini_batch else []):
                _, nearest, indices = self.infer()
            with tf.control_dependencies([self._update(indices)]):
                return tf.reduce_sum(nearest)

        def initialize() -> tf.Tensor:
            with tf.control_dependencies([self._initialize()]):
                return tf.zeros([], self._points.dtype)

        loss = tf.cond(was_initialized, train, initialize)
        return loss.op, was_initialized, loss

    def _update(self, indices: tf.Tensor) -> tf.Operation:
        if not self._mini_batch:
            return self._full_batch_update(indices)
        return self._mini_batch_update(indices)

    def _sync_op(self) -> tf.Operation:
        """Every `mini_batch_steps_per_iteration` steps: accumulated centers -> `clusters`."""
        update_in_steps, counts = self.update_in_steps, self.counts
        if update_in_steps is None or counts is None:  # both are made, or neither
            return tf.no_op()

        def sync() -> tf.Tensor:
            reset = update_in_steps.assign(self._steps_per_iteration - 1)
            with tf.control_dependencies([reset]):
                updated = self.clusters_updated.read_value()
                if self._metric == COSINE_DISTANCE:
                    updated = _l2_normalize(updated)
                with tf.control_dependencies([self.clusters.assign(updated)]):
                    with tf.control_dependencies([counts.assign(tf.zeros_like(counts))]):
                        return update_in_steps.read_value()

        return tf.cond(
            update_in_steps.read_value() <= 0,
            sync,
            lambda: update_in_steps.assign_sub(1),
        ).op

    def _mini_batch_update(self, indices: tf.Tensor) -> tf.Operation:
        """Each center moves to the running mean of the points it has been given."""
        counts = self.counts
        assert counts is not None  # made for every mini-batch graph
        inputs = self._inputs()
        indices = tf.reshape(indices, [-1])
        unique_ids, unique_idx = tf.unique(indices)
        num_unique = tf.size(unique_ids)
        old_centers = tf.gather(self.clusters_updated.read_value(), unique_ids)
        new_counts = tf.math.unsorted_segment_sum(
            tf.ones_like(unique_idx, dtype=tf.int64), unique_idx, num_unique
        )
        # tf.estimator 2.15's graph gave the counts' update no order against their read;
        # its executor ran the update first (its centers match only that way): the rate
        # is 1 / (n + 2m), and so it is here.
        update_counts = counts.scatter_add(tf.IndexedSlices(new_counts, unique_ids))
        with tf.control_dependencies([update_counts]):
            old_counts = tf.gather(counts.read_value(), unique_ids)
        broadcast = tf.concat(
            [tf.reshape(num_unique, [1]), tf.ones(tf.reshape(tf.rank(inputs) - 1, [1]), tf.int32)],
            0,
        )
        # A center x seen n times, given points d_1..d_m: x += (sum(d) - m x) * rate.
        delta = tf.math.unsorted_segment_sum(inputs, unique_idx, num_unique)
        delta -= tf.cast(tf.reshape(new_counts, broadcast), inputs.dtype) * old_centers
        rate = tf.math.reciprocal(tf.cast(old_counts + new_counts, inputs.dtype))
        delta *= tf.reshape(rate, broadcast)
        return tf.group(
            update_counts, self.clusters_updated.scatter_add(tf.IndexedSlices(delta, unique_ids))
        )

    def _full_batch_update(self, indices: tf.Tensor) -> tf.Operation:
        """Each center becomes the mean of the batch points nearest to it (Lloyd)."""
        points = self._inputs()
        sums = tf.math.unsorted_segment_sum(points, indices, self._k)
        ones = tf.reshape(tf.ones(tf.reshape(tf.shape(points)[0], [-1])), [-1, 1])
        counts = tf.math.unsorted_segment_sum(ones, indices, self._k)
        centers = sums / (tf.cast(counts, sums.dtype) + tf.constant(1e-6, sums.dtype))
        if self._centers_normalized():
            centers = _l2_normalize(centers)
        return self.clusters.assign(centers, read_value=False)

    # -- initialization ----------------------------------------------------------
    def _initialize(self) -> tf.Operation:
        """Adds up to the missing number of centers from this batch; sets `initialized`
        once there are k."""
        selected = tf.shape(self.clusters.read_value())[0]
        remaining = self._k - selected

        def add_centers() -> tf.Tensor:
            with tf.control_dependencies([tf.debugging.assert_positive(remaining)]):
                new = self._choose(remaining)
            if self._metric == COSINE_DISTANCE:
                new = _l2_normalize(new)
            centers = tf.cond(
                tf.equal(selected, 0),
                lambda: new,
                lambda: tf.concat([self.clusters.read_value(), new], 0),
            )
            assigned = [self.clusters.assign(centers, read_value=False)]
            if self.clusters_updated is not self.clusters:
                assigned.append(self.clusters_updated.assign(centers, read_value=False))
            with tf.control_dependencies(assigned):
                done = tf.equal(self._k - tf.shape(centers)[0], 0)
                return self.initialized.assign(done).op

        # All k chosen but not marked (a checkpoint cut between): mark it.
        return tf.cond(
            tf.equal(remaining, 0), lambda: self.initialized.assign(True).op, add_centers
        )

    def _choose(self, remaining: tf.Tensor) -> tf.Tensor:
        points = self._points
        count = tf.shape(points)[0]
        if isinstance(self._initial, str) and self._initial == RANDOM_INIT:

            def sample() -> tf.Tensor:
                indices = tf.random.uniform(
                    tf.reshape(remaining, [-1]),
                    minval=0,
                    maxval=tf.cast(count, tf.int64),
                    dtype=tf.int64,
                    seed=self._seed,
                )
                return tf.gather(points, indices)

            # A batch smaller than what is missing is taken whole (more batches follow).
            return tf.cond(count <= remaining, lambda: points, sample)
        if isinstance(self._initial, str):  # k-means++ over this one batch
            inputs = _l2_normalize(points) if self._metric == COSINE_DISTANCE else points
            with tf.control_dependencies([tf.debugging.assert_greater_equal(count, remaining)]):
                return tf.raw_ops.KmeansPlusPlusInitialization(
                    points=inputs,
                    num_to_sample=tf.cast(remaining, tf.int64),
                    seed=tf.constant(self._seed or 0, tf.int64),
                    num_retries_per_sample=tf.constant(self._retries, tf.int64),
                )
        if callable(self._initial):
            chooser: Callable = self._initial
            return tf.convert_to_tensor(chooser([points], remaining), points.dtype)
        with tf.control_dependencies(
            [tf.debugging.assert_equal(remaining, tf.shape(self._initial)[0])]
        ):
            return tf.identity(self._initial)
