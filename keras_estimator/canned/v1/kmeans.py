"""`tf.compat.v1.estimator.experimental.KMeans` (KMeansClustering): k-means as an Estimator.

The model_fn of tf.estimator 2.15: `loss` is the sum of squared distances from each point
to its nearest center, `eval_metric_ops` maps `score` to its mean over batches, predictions
are `all_distances` and `cluster_index`. The graph itself is canned/kmeans_graph.py.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import numpy as np
import tensorflow as tf

from keras_estimator.canned import kmeans_graph
from keras_estimator.estimator.estimator_v1 import Estimator
from keras_estimator.export.export_outputs import PredictOutput
from keras_estimator.spec.estimator_spec import EstimatorSpec
from keras_estimator.spec.run_config import RunConfig
from keras_estimator.utils.log import quiet_tf_deprecations

_V1 = tf.compat.v1


class _LossRelativeChangeHook(tf.compat.v1.train.SessionRunHook):
    """Stops training once the loss changes by less than `tolerance` (relative)."""

    def __init__(self, loss: tf.Tensor, tolerance: float) -> None:
        self._loss, self._tolerance, self._previous = loss, tolerance, None

    def before_run(self, run_context: Any) -> Any:
        return _V1.train.SessionRunArgs(self._loss)

    def after_run(self, run_context: Any, run_values: Any) -> None:
        loss = run_values.results
        if self._previous:  # 2.15 skipped a first (or zero) loss: nothing to compare to
            if abs(loss - self._previous) / (1 + abs(self._previous)) < self._tolerance:
                run_context.request_stop()
        self._previous = loss


def _points(features: Any, feature_columns: Any) -> tf.Tensor:
    """The [n, d] points: a tensor as given, or a dict's values (by the columns, else every
    key in sorted order) side by side."""
    if not isinstance(features, dict):
        return tf.convert_to_tensor(features)
    if feature_columns:
        with quiet_tf_deprecations():
            return _V1.feature_column.input_layer(features, feature_columns)
    return tf.concat([features[key] for key in sorted(features)], axis=1)


class KMeansClustering(Estimator):
    """An Estimator for k-means clustering, as `tf.compat.v1.estimator.experimental.KMeans`.

    Each training step runs one mini-batch update (`use_mini_batch=True`, the default;
    every `mini_batch_steps_per_iteration` steps the accumulated centers are synced) or one
    full-batch Lloyd iteration over the batch (`use_mini_batch=False`: the input_fn should
    return all points in one batch). Before the first step the initial centers are chosen
    from the first batch(es), which do not count as steps. The centers are the checkpoint
    variable `clusters`.

    Args:
        num_clusters: the number of clusters (ignored when `initial_clusters` are centers).
        model_dir: where checkpoints and summaries go.
        initial_clusters: `RANDOM_INIT`, `KMEANS_PLUS_PLUS_INIT`, a callable `f(inputs, k)`
            returning up to k centers from `inputs` (a list of one [n, d] tensor), or the
            initial centers ([k, d] tensor or array).
        distance_metric: `SQUARED_EUCLIDEAN_DISTANCE` or `COSINE_DISTANCE`.
        seed: the seed of the random initial centers.
        use_mini_batch: mini-batch k-means (else full-batch).
        mini_batch_steps_per_iteration: steps between syncs of the centers (mini-batch).
        kmeans_plus_plus_num_retries: extra samples per k-means++ center.
        relative_tolerance: stop training once the loss changes by less than this.
        config: a `RunConfig`.
        feature_columns: columns for `tf.compat.v1.feature_column.input_layer` over a
            features dict (None: every feature, keys sorted, concatenated).

    Example:
        >>> kmeans = KMeansClustering(num_clusters=3, use_mini_batch=False, seed=1)
        >>> kmeans.train(lambda: tf.data.Dataset.from_tensors(points), steps=10)
        >>> kmeans.cluster_centers(), kmeans.score(input_fn)
    """

    SQUARED_EUCLIDEAN_DISTANCE = kmeans_graph.SQUARED_EUCLIDEAN_DISTANCE
    COSINE_DISTANCE = kmeans_graph.COSINE_DISTANCE
    RANDOM_INIT = kmeans_graph.RANDOM_INIT
    KMEANS_PLUS_PLUS_INIT = kmeans_graph.KMEANS_PLUS_PLUS_INIT
    SCORE = "score"
    CLUSTER_INDEX = "cluster_index"
    ALL_DISTANCES = "all_distances"
    CLUSTER_CENTERS_VAR_NAME = kmeans_graph.CLUSTERS_VAR_NAME

    def __init__(
        self,
        num_clusters: Any,
        model_dir: str | os.PathLike | None = None,
        initial_clusters: Any = RANDOM_INIT,
        distance_metric: str = SQUARED_EUCLIDEAN_DISTANCE,
        seed: int | None = None,
        use_mini_batch: bool = True,
        mini_batch_steps_per_iteration: int = 1,
        kmeans_plus_plus_num_retries: int = 2,
        relative_tolerance: float | None = None,
        config: RunConfig | None = None,
        feature_columns: Any = None,
    ) -> None:
        if isinstance(initial_clusters, str) and initial_clusters not in (
            self.RANDOM_INIT,
            self.KMEANS_PLUS_PLUS_INIT,
        ):
            # tf.estimator 2.15's message, with what was expected.
            raise ValueError(
                f"Unsupported initialization algorithm '{initial_clusters}'. Expected "
                f"'{self.RANDOM_INIT}', '{self.KMEANS_PLUS_PLUS_INIT}', a callable or the "
                f"initial centers. Received: initial_clusters={initial_clusters!r}"
            )
        if distance_metric not in (self.SQUARED_EUCLIDEAN_DISTANCE, self.COSINE_DISTANCE):
            raise ValueError(
                f"Unsupported distance metric '{distance_metric}'. Expected "
                f"'{self.SQUARED_EUCLIDEAN_DISTANCE}' or '{self.COSINE_DISTANCE}'. "
                f"Received: distance_metric={distance_metric!r}"
            )
        self._distance_metric = distance_metric
        if not isinstance(initial_clusters, str) and not callable(initial_clusters):
            initial_clusters = np.asarray(initial_clusters)  # re-made in each trace's graph

        def model_fn(features, mode, config):
            graph = kmeans_graph.KMeansGraph(
                _points(features, feature_columns), num_clusters, initial_clusters,
                distance_metric, use_mini_batch, mini_batch_steps_per_iteration, seed,
                kmeans_plus_plus_num_retries,
            )  # fmt: skip
            return _spec(graph, mode, relative_tolerance)

        super().__init__(model_fn=model_fn, model_dir=model_dir, config=config)

    def _predict_one_key(self, input_fn: Any, key: str) -> Iterator[Any]:
        """Each example's `key` output: an array, or a numpy scalar (the cluster index)."""
        for result in self.predict(input_fn=input_fn, predict_keys=[key]):
            yield result[key]

    def predict_cluster_index(self, input_fn: Any) -> Iterator[np.int64]:
        """Yields the index of the nearest cluster center of each input point."""
        yield from self._predict_one_key(input_fn, self.CLUSTER_INDEX)

    def score(self, input_fn: Any) -> float:
        """The sum of squared distances from each point of the first batch to its nearest
        center (sklearn's score is its negative)."""
        return self.evaluate(input_fn=input_fn, steps=1)[self.SCORE]

    def transform(self, input_fn: Any) -> Iterator[np.ndarray]:
        """Yields each point's distances to every center: Euclidean (the square root of
        `all_distances`) for the squared Euclidean metric, else cosine distances."""
        for distances in self._predict_one_key(input_fn, self.ALL_DISTANCES):
            if self._distance_metric == self.SQUARED_EUCLIDEAN_DISTANCE:
                yield np.sqrt(distances)
            else:
                yield distances

    def cluster_centers(self) -> np.ndarray:
        """The cluster centers of the latest checkpoint ([k, d])."""
        return self.get_variable_value(self.CLUSTER_CENTERS_VAR_NAME)


def _spec(graph: kmeans_graph.KMeansGraph, mode: str, relative_tolerance: Any) -> EstimatorSpec:
    all_distances, nearest, indices = graph.infer()
    predictions = {
        KMeansClustering.ALL_DISTANCES: all_distances,
        KMeansClustering.CLUSTER_INDEX: indices,
    }
    export_outputs = {
        KMeansClustering.ALL_DISTANCES: PredictOutput(all_distances),
        KMeansClustering.CLUSTER_INDEX: PredictOutput(indices),
        tf.saved_model.DEFAULT_SERVING_SIGNATURE_DEF_KEY: PredictOutput(indices),
    }
    if mode == "infer":
        return EstimatorSpec(mode, predictions=predictions, export_outputs=export_outputs)
    if mode == "eval":
        loss = tf.reduce_sum(nearest)
        return EstimatorSpec(
            mode, loss=loss, eval_metric_ops={KMeansClustering.SCORE: _V1.metrics.mean(loss)}
        )
    train_op, was_initialized, loss = graph.training_step()
    _V1.summary.scalar("loss/raw", loss)
    global_step = _V1.train.get_global_step()
    with tf.control_dependencies([train_op]):
        # The step that chose the initial centers is not a training step (2.15's hook).
        step = global_step.assign_add(tf.cast(was_initialized, tf.int64), read_value=False)
    with tf.control_dependencies([step]):
        loss = tf.identity(loss)
    hooks = (
        [] if relative_tolerance is None else [_LossRelativeChangeHook(loss, relative_tolerance)]
    )
    return EstimatorSpec(mode, loss=loss, train_op=loss.op, training_hooks=hooks)
