"""Parameter-server clusters (TF_CONFIG with `ps` tasks) on tf.distribute.

tf.estimator trained such clusters between-graph: every worker ran its own session
against variables placed on the ps tasks. TensorFlow 2 has a different model,
`ParameterServerStrategy` with a `ClusterCoordinator`: one process (here the chief)
traces the step and schedules it onto the workers, which, like the ps tasks, only run a
`tf.distribute.Server`. So under keras_estimator:

- the chief runs `train()`: the model_fn, input_fn, hooks, logging and checkpoints;
- `worker` tasks serve until the chief's checkpoints reach `max_steps` (with no
  `max_steps` they serve until stopped, as ps tasks do);
- `ps` tasks serve until stopped, as they did under tf.estimator.

Steps scheduled onto several workers run asynchronously, as tf.estimator's workers did.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

import tensorflow as tf

from keras_estimator.checkpoint import checkpoint_files as ckpt_lib
from keras_estimator.spec.run_config import TaskType

logger = logging.getLogger("keras_estimator")
_POLL_SECS = 1.0


def is_parameter_server_strategy(strategy: Any) -> bool:
    return isinstance(strategy, tf.distribute.experimental.ParameterServerStrategy)


def has_parameter_servers(config: Any) -> bool:
    return bool(config.num_ps_replicas) or config.task_type == TaskType.PS


def make_parameter_server_strategy() -> tf.distribute.Strategy:
    """The chief's strategy for a TF_CONFIG cluster with ps tasks (waits for the servers)."""
    resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
    logger.info("TF_CONFIG has ps tasks: training with ParameterServerStrategy, this task as "
                "the coordinator.")  # fmt: skip
    return tf.distribute.experimental.ParameterServerStrategy(resolver)


def coordinator_of(strategy: tf.distribute.Strategy) -> Any:
    """The strategy's one ClusterCoordinator (TF keeps a single one per strategy)."""
    return tf.distribute.experimental.coordinator.ClusterCoordinator(strategy)


def per_worker_dataset(strategy: tf.distribute.Strategy, dataset_fn: Callable) -> Any:
    """input_fn's dataset made on every worker; dataset_fn takes an InputContext."""

    def on_worker() -> Any:
        return strategy.distribute_datasets_from_function(dataset_fn)

    return coordinator_of(strategy).create_per_worker_dataset(on_worker)


def serve(config: Any, model_dir: str, max_steps: int | None) -> None:
    """Runs this worker / ps task's server for the chief (see the module docstring)."""
    server = tf.distribute.Server(
        config.cluster_spec,
        job_name=config.task_type,
        task_index=config.task_id,
        protocol=config.protocol or "grpc",
        start=True,
    )
    logger.info("Serving as %s:%d of a parameter-server cluster.", config.task_type,
                config.task_id)  # fmt: skip
    if config.task_type == TaskType.PS or not max_steps:
        server.join()  # as tf.estimator's ps tasks: until the job is stopped
        return
    while True:
        checkpoint = ckpt_lib.latest_checkpoint(model_dir)
        if checkpoint is not None:
            step = int(tf.train.load_variable(checkpoint, "global_step"))
            if step >= max_steps:
                logger.info("The chief's checkpoint reached step %d: worker done.", step)
                return
        time.sleep(_POLL_SECS)
