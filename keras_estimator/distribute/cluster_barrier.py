"""The end of a multi-worker training job: every task waits for the chief's final checkpoint.

Under MultiWorkerMirroredStrategy only the chief saves. Its final save happens after the
last step, while the other tasks are already done; had they returned at once, an
`evaluate()`, an export or a `get_variable_value()` on a worker would read model_dir before
the final checkpoint is there (and see an older step). So every task, the chief once its
final checkpoint is written, joins one all-reduce over the cluster before `train()`
returns: it completes only when every task has arrived. The all-reduce also compares the
tasks' final steps (a task that ended elsewhere fails with a clear error, not a hang).
"""

from __future__ import annotations

import logging
import weakref
from typing import Any

import tensorflow as tf

from keras_estimator.distribute import parameter_servers
from keras_estimator.seam import internals

logger = logging.getLogger("keras_estimator")

# How long a task waits for the others at the end of training: the chief's final save
# (and its saving listeners, which may evaluate or export) happens inside this wait.
END_OF_TRAINING_TIMEOUT_SECS = 1800.0

_barriers: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def spans_several_tasks(strategy: tf.distribute.Strategy | None) -> bool:
    """A strategy whose replicas live in several processes and train in lock step."""
    return (
        strategy is not None
        and not parameter_servers.is_parameter_server_strategy(strategy)
        and internals.in_multi_worker_mode(strategy)
    )


def _barrier_of(strategy: tf.distribute.Strategy, timeout_secs: float) -> Any:
    """The one traced all-reduce of this strategy (traced once: every task traces it at the
    same point of its run, so its collective keys agree across the cluster)."""
    barrier = _barriers.get(strategy)
    if barrier is None:
        options = tf.distribute.experimental.CommunicationOptions(timeout_seconds=timeout_secs)

        def replica_fn(step: tf.Tensor) -> tf.Tensor:
            # [number of replicas, sum of their steps] over every task.
            both = tf.stack([tf.constant(1, tf.int64), step])
            return tf.distribute.get_replica_context().all_reduce("sum", both, options=options)

        def run(step: tf.Tensor) -> Any:
            return strategy.run(replica_fn, args=(step,))

        barrier = _barriers[strategy] = tf.function(run, autograph=False)
    return barrier


def wait_for_every_task(
    strategy: tf.distribute.Strategy | None,
    step: int,
    timeout_secs: float = END_OF_TRAINING_TIMEOUT_SECS,
) -> None:
    """Returns once every task of `strategy`'s cluster has finished training at `step`.

    Call it after the chief's final checkpoint is saved. Without a multi-task strategy
    (no strategy, MirroredStrategy on one machine, parameter servers) it returns at once.

    Raises:
        tf.errors.DeadlineExceededError: another task did not arrive within `timeout_secs`.
        ValueError: the tasks finished training at different global steps.

    Example:
        >>> wait_for_every_task(tf.distribute.get_strategy(), final_step)
    """
    if strategy is None or not spans_several_tasks(strategy):
        return
    logger.info("Training ended at step %d; waiting for every task of the cluster (the "
                "chief's final checkpoint).", step)  # fmt: skip
    try:
        reduced = _barrier_of(strategy, timeout_secs)(tf.constant(step, tf.int64))
    except tf.errors.DeadlineExceededError as exc:
        raise tf.errors.DeadlineExceededError(
            exc.node_def,
            exc.op,
            f"This task finished training at step {step}, but another task of the cluster did "
            f"not finish training within {timeout_secs:g}s (the chief arrives once its final "
            "checkpoint is saved). Expected every task to end training at the same step. Fix: "
            "check the other tasks' logs; make every task stop at the same step (max_steps or "
            "steps, not a hook on one task only); restart every task to resume from the "
            f"latest checkpoint. Received: step={step}, timeout_secs={timeout_secs:g}",
        ) from exc
    replicas, total = (int(v) for v in strategy.experimental_local_results(reduced)[0])
    if total != replicas * step:
        raise ValueError(
            "The tasks of the multi-worker job finished training at different global steps: "
            f"this one at {step}, the {replicas} replicas at {total / replicas:g} on average. "
            "Expected every task to end at the same step (they train in lock step). Fix: stop "
            "training with max_steps or steps on every task, not with a hook on one task only. "
            f"Received: step={step}"
        )
    logger.info("Every task finished training at step %d.", step)
