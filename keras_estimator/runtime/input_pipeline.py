"""What keras_estimator adds around an input_fn's dataset to feed the compiled loop faster.

tf.estimator pulled one batch per `session.run`; here the loop runs inside a `tf.function`
while tf.data prepares the next batches. Only tf.data's own graph rewrites that keep the
elements and their order are enabled (and only those the input_fn's options leave unset):
stateless `map`s run in parallel (the TFRecord-parsing map of estimator-era input_fns) and
batches are assembled in parallel. tf.data already prefetches after the last transformation
(`inject_prefetch`, on by default).

A call's iterator is let go on a thread of its own when the call ends (`CallInput`): deleting
a tf.data iterator can wait seconds for tf.data's autotuning thread.
"""

from __future__ import annotations

import functools
import sys
import threading
from typing import Any

import tensorflow as tf

from keras_estimator.seam.internals import draws_from_several_datasets

# (option group, option): tf.data rewrites that change neither values nor order.
_ORDER_KEEPING_REWRITES = (
    ("experimental_optimization", "map_parallelization"),
    ("experimental_optimization", "parallel_batch"),
)


def with_parallel_input(dataset: Any) -> Any:
    """`dataset` with the order-keeping parallel rewrites the input_fn did not set itself."""
    if not isinstance(dataset, tf.data.Dataset):
        return dataset
    chosen = dataset.options()
    if chosen.deterministic is False or chosen.experimental_deterministic is False:
        return dataset  # the input_fn chose its own order; leave its pipeline alone
    options = tf.data.Options()
    changed = False
    for group, name in _ORDER_KEEPING_REWRITES:
        if getattr(getattr(chosen, group), name) is None:  # None: the input_fn left it unset
            setattr(getattr(options, group), name, True)
            changed = True
    return dataset.with_options(options) if changed else dataset


class CallInput:
    """The iterator over one Estimator call's dataset, let go off the caller's thread.

    Use it as a context manager and read `iterator` where it is used (never keep it in a
    local that outlives the call): on exit, `release()` holds its last reference and drops it
    on a thread of its own, so the call returns without waiting for the deletion.

    Why: in TF 2.21 an iterator's destructor waits for tf.data's autotuning thread, and that
    thread misses the wake-up (`CancellationManager::StartCancel` runs the callback that
    wakes it before `IsCancelled()` turns true), so it sleeps out the rest of its
    optimization period, which doubles up to 60 s over the iterator's life. Measured: 3-4 s
    at the end of a 10 s train() in about half the processes (the bimodal wide_mlp figures
    of the speed table). The wait holds no GIL, so on another thread it costs nothing; the
    thread is no daemon, so a process still exits only once its input pipelines are gone.

    Example:
        >>> with CallInput(dataset) as inputs:
        ...     batch = next(inputs.iterator)
    """

    def __init__(self, dataset: Any) -> None:
        self.dataset = dataset
        self.iterator: Any = iter(dataset)

    @functools.cached_property
    def endless(self) -> bool:
        """The dataset never ends (tf.data knows it of `repeat()`): loops skip end checks.
        Read by training only."""
        return (
            isinstance(self.dataset, tf.data.Dataset)
            and int(self.dataset.cardinality()) == tf.data.INFINITE_CARDINALITY
            and not draws_from_several_datasets(self.dataset)
        )

    def __enter__(self) -> CallInput:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.release()

    def release(self) -> None:
        """Drops the iterator on a thread of its own (here, while the process exits)."""
        held = [] if self.iterator is None else [self.iterator]
        self.iterator = None
        if not held:
            return
        if sys.is_finalizing() or not threading.main_thread().is_alive():
            # Exiting (a predict generator closed at shutdown, an atexit handler): Python
            # 3.10-3.11 would wait forever for a new thread to start.
            held.clear()
            return
        try:
            threading.Thread(target=held.clear, name="keras_estimator-input-release").start()
        except RuntimeError:  # Python 3.12+ at shutdown: no new threads
            held.clear()
