"""`tf.contrib.factorization`: its estimator, `KMeansClustering`, as TF 1.x's contrib had it.

The contrib class is tf.estimator's k-means (keras_estimator.canned.v1.kmeans) with
contrib's constructor (`random_seed=0`, no `feature_columns`) and contrib's `transform`,
which yielded the squared Euclidean distances (tf.estimator's took their square root).
Its other names (WALS, GMM) raise an error naming the replacement.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import numpy as np

from keras_estimator.canned.v1.kmeans import KMeansClustering as _KMeansClustering
from keras_estimator.dropin.contrib.removed import removed_attribute_getattr
from keras_estimator.spec.run_config import RunConfig


class KMeansClustering(_KMeansClustering):
    """`tf.contrib.factorization.KMeansClustering`: k-means as an Estimator.

    Example:
        >>> kmeans = tf.contrib.factorization.KMeansClustering(num_clusters=5)
        >>> kmeans.train(input_fn, steps=10)
    """

    def __init__(
        self,
        num_clusters: Any,
        model_dir: str | os.PathLike | None = None,
        initial_clusters: Any = _KMeansClustering.RANDOM_INIT,
        distance_metric: str = _KMeansClustering.SQUARED_EUCLIDEAN_DISTANCE,
        random_seed: int = 0,
        use_mini_batch: bool = True,
        mini_batch_steps_per_iteration: int = 1,
        kmeans_plus_plus_num_retries: int = 2,
        relative_tolerance: float | None = None,
        config: RunConfig | None = None,
    ) -> None:
        super().__init__(
            num_clusters, model_dir, initial_clusters, distance_metric, random_seed,
            use_mini_batch, mini_batch_steps_per_iteration, kmeans_plus_plus_num_retries,
            relative_tolerance, config,
        )  # fmt: skip

    def transform(self, input_fn: Any) -> Iterator[np.ndarray]:
        """Yields each point's `all_distances` (squared Euclidean, or cosine), as contrib."""
        yield from self._predict_one_key(input_fn, self.ALL_DISTANCES)


__getattr__ = removed_attribute_getattr(
    "factorization", "tf.contrib.factorization.KMeansClustering, or keras models (e.g. an "
    "embedding dot product) for WALS and GMM",
)  # fmt: skip

__all__ = ["KMeansClustering"]
