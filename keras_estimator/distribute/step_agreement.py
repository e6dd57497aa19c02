"""Several steps per call under MultiWorkerMirroredStrategy: every task runs as many.

Every step of a multi-worker job all-reduces its gradients across the tasks, so their
compiled calls must match: a call of N steps on one task against N calls of one step on
another hangs. Each task's training loop wants its own run of steps (the chief's ends at
its checkpoints and at the steps its hooks fetch from; a worker has neither). So before
each call the tasks agree on the smallest run any of them wants, with one small
all-reduce: every replica adds a one-hot vote for its run length, and the first non-zero
entry of the sum is the smallest.

The vote also carries a stop: a task that wants to end training (a hook's request_stop or
a StopAtStepHook on that task only, a saving listener, SIGTERM or Ctrl-C) votes 0, the
smallest entry, so every task learns at the same agreement that training ends, and all
end at the same step (then the chief saves and the end-of-training barrier completes).
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np
import tensorflow as tf

MOST_STEPS_PER_CALL = 1000

_agreements: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _agreement_of(strategy: tf.distribute.Strategy) -> Any:
    """The one traced vote of this strategy (every task traces it at its first call)."""
    agreement = _agreements.get(strategy)
    if agreement is None:

        def replica_fn(steps: tf.Tensor) -> tf.Tensor:
            vote = tf.one_hot(steps, MOST_STEPS_PER_CALL + 1, dtype=tf.int32)
            return tf.distribute.get_replica_context().all_reduce("sum", vote)

        def run(steps: tf.Tensor) -> Any:
            return strategy.run(replica_fn, args=(steps,))

        agreement = _agreements[strategy] = tf.function(run, autograph=False)
    return agreement


def agreed_steps(strategy: tf.distribute.Strategy, steps: int, stop: bool = False) -> int:
    """The smallest of the steps every task of `strategy`'s cluster asks for (each >= 1),
    or 0 when any task asks to stop (`stop=True`): training then ends on every task.

    Every task must call it at the same point of its loop (once per call of steps, and once
    more where it wants to stop).

    Example:
        >>> chunk = agreed_steps(strategy, chunk, stop=hook_requested_stop)
        >>> if chunk == 0:
        ...     break  # some task stops: every task stops here
    """
    wanted = 0 if stop else max(1, min(int(steps), MOST_STEPS_PER_CALL))
    votes = _agreement_of(strategy)(tf.constant(wanted, tf.int32))
    total = strategy.experimental_local_results(votes)[0].numpy()
    return int(np.flatnonzero(total)[0])
