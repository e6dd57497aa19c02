"""Summaries written from inside the compiled training step, every `save_summary_steps`.

With a default writer set while the step is traced, both `tf.summary.*` and
`tf.compat.v1.summary.*` calls in the model_fn become writes in the step, guarded by
`record_if(global step % N == 0)`. They are stamped with the global step after the
step, as tf.estimator's SummarySaverHook did (1, N + 1, 2N + 1, ...).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import tensorflow as tf


@contextlib.contextmanager
def summaries_every(every: int | None, step_before: tf.Tensor) -> Iterator[None]:
    """Records summaries created inside on steps where `step_before % every == 0`."""
    if not every:
        with tf.summary.record_if(False):
            yield
        return
    previous = tf.summary.experimental.get_step()
    tf.summary.experimental.set_step(step_before + 1)
    try:
        with tf.summary.record_if(tf.equal(step_before % every, 0)):
            yield
    finally:
        tf.summary.experimental.set_step(previous)


def write_scalars(writer: tf.summary.SummaryWriter, values: dict, step: int) -> None:
    """Writes Python / numpy scalars (e.g. evaluation results) at `step`."""
    with writer.as_default():
        for name, value in values.items():
            try:
                tf.summary.scalar(name, float(value), step=step)
            except (TypeError, ValueError):
                continue  # not a scalar: tf.estimator skipped those too
    writer.flush()
