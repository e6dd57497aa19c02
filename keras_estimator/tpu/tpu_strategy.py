"""use_tpu=True: a tf.distribute.TPUStrategy from tpu.RunConfig's cluster resolver.

Follows the TPUStrategy guide: connect to the cluster, initialise the TPU system, build the
strategy. Without a TPU this fails fast with an error saying what to do (no hang).
"""

from __future__ import annotations

import logging
from typing import Any

import tensorflow as tf

logger = logging.getLogger("keras_estimator")


def tpu_resolver(config: Any) -> Any:
    """The TPUClusterResolver of `config` (its `cluster`, or one for its `master`)."""
    if config.cluster is not None:
        return config.cluster
    if config.master:
        return tf.distribute.cluster_resolver.TPUClusterResolver(tpu=config.master)
    raise ValueError(
        "TPUEstimator(use_tpu=True) needs to know which TPU to use, and tpu.RunConfig names "
        "none. Fix: pass tpu.RunConfig(cluster=tf.distribute.cluster_resolver."
        "TPUClusterResolver(tpu='<name or grpc://address>')), or master='grpc://...'; or "
        "use_tpu=False to run the same model_fn on CPU/GPU."
    )


def make_tpu_strategy(config: Any) -> tf.distribute.TPUStrategy:
    """Connects to the TPU of `config` and returns a TPUStrategy over its cores."""
    if (config.tpu_config.num_cores_per_replica or 1) > 1:
        raise NotImplementedError(
            "TPUConfig(num_cores_per_replica > 1) (model parallelism) is not supported by "
            "keras_estimator. Expected one core per replica (num_cores_per_replica=None)."
        )
    resolver = tpu_resolver(config)
    try:
        tf.config.experimental_connect_to_cluster(resolver)
        tf.tpu.experimental.initialize_tpu_system(resolver)
    except (tf.errors.OpError, ValueError, AssertionError) as exc:
        raise RuntimeError(
            f"No TPU could be initialised through {resolver.master()!r}: {exc}. Fix: check "
            "the TPU name or address given to TPUClusterResolver (and that this machine can "
            "reach it), or pass use_tpu=False to run on CPU/GPU."
        ) from exc
    strategy = tf.distribute.TPUStrategy(resolver)
    logger.info("Using TPUStrategy with %d replicas.", strategy.num_replicas_in_sync)
    return strategy
