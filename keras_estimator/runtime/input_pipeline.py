"""What keras_estimator adds around an input_fn's dataset to feed the compiled loop faster.

tf.estimator pulled one batch per `session.run`; here the loop runs inside a `tf.function`
while tf.data prepares the next batches. Only tf.data's own graph rewrites that keep the
elements and their order are enabled (and only those the input_fn's options leave unset):
stateless `map`s run in parallel (the TFRecord-parsing map of estimator-era input_fns) and
batches are assembled in parallel. tf.data already prefetches after the last transformation
(`inject_prefetch`, on by default).
"""

from __future__ import annotations

from typing import Any

import tensorflow as tf

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
