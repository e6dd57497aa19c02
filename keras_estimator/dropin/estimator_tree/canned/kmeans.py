"""2.15's `canned/kmeans.py`: `KMeansClustering` (keras_estimator.canned.v1.kmeans, over
kmeans_graph.KMeansGraph) and its model_fn pieces.

Our `KMeansClustering` chooses the initial centers inside its first training step (that
step does not count), so it needs no `_InitializeClustersHook`; the hook is here for code
that builds its own init op and runs it from a session hook, as 2.15's model_fn did.
"""

from __future__ import annotations

from typing import Any

import tensorflow as tf

from keras_estimator.canned import kmeans_graph
from keras_estimator.canned.v1.kmeans import KMeansClustering, _LossRelativeChangeHook, _spec
from keras_estimator.canned.v1.kmeans import _points as _parse_features_if_necessary

__all__ = [
    "KMeansClustering",
    "_InitializeClustersHook",
    "_LossRelativeChangeHook",
    "_ModelFn",
    "_parse_features_if_necessary",
]


class _InitializeClustersHook(tf.compat.v1.train.SessionRunHook):
    """Runs `init_op` once the session exists, on the chief, unless `is_initialized_var`
    says the clusters are set already (2.15's hook; it retried until they were).

    Args:
        init_op: the op that sets the initial cluster centers.
        is_initialized_var: a boolean variable (or tensor), true once they are set.
        is_chief: whether this task runs `init_op` (others wait for the chief).
    """

    def __init__(self, init_op: Any, is_initialized_var: Any, is_chief: bool) -> None:
        self._init_op = init_op
        self._is_initialized_var = is_initialized_var
        self._is_chief = is_chief

    def after_create_session(self, session: Any, coord: Any) -> None:
        """Initializes the clusters (chief), then checks that they are set."""
        if self._is_chief and not session.run(self._is_initialized_var):
            session.run(self._init_op)
        if not session.run(self._is_initialized_var):
            raise RuntimeError(
                "The k-means clusters are not initialized after the chief's init op ran. "
                "Expected is_initialized_var to be true. Fix: check that init_op sets it "
                "(and that the chief task runs this hook)."
            )


class _ModelFn:
    """The model_fn of `KMeansClustering` as an object (2.15's `_ModelFn`): call `model_fn`.

    Args are `KMeansClustering`'s: num_clusters, initial_clusters, distance_metric, seed,
    use_mini_batch, mini_batch_steps_per_iteration, kmeans_plus_plus_num_retries,
    relative_tolerance, feature_columns.
    """

    def __init__(
        self, num_clusters: Any, initial_clusters: Any, distance_metric: str, seed: Any,
        use_mini_batch: bool, mini_batch_steps_per_iteration: int,
        kmeans_plus_plus_num_retries: int, relative_tolerance: Any, feature_columns: Any,
    ) -> None:  # fmt: skip
        self._num_clusters = num_clusters
        self._initial_clusters = initial_clusters
        self._distance_metric = distance_metric
        self._seed = seed
        self._use_mini_batch = use_mini_batch
        self._mini_batch_steps_per_iteration = mini_batch_steps_per_iteration
        self._kmeans_plus_plus_num_retries = kmeans_plus_plus_num_retries
        self._relative_tolerance = relative_tolerance
        self._feature_columns = feature_columns

    def model_fn(self, features: Any, mode: str, config: Any) -> Any:
        """The `EstimatorSpec` of k-means for `mode` (`config` is unused here: the chief
        initializes inside the training step)."""
        del config
        graph = kmeans_graph.KMeansGraph(
            _parse_features_if_necessary(features, self._feature_columns),
            self._num_clusters, self._initial_clusters, self._distance_metric,
            self._use_mini_batch, self._mini_batch_steps_per_iteration, self._seed,
            self._kmeans_plus_plus_num_retries,
        )  # fmt: skip
        return _spec(graph, mode, self._relative_tolerance)
