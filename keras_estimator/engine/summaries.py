"""Summaries written from inside the compiled training step, every `save_summary_steps`.

As under tf.estimator: `tf.compat.v1.summary.*` ops in the model_fn go to the SUMMARIES
collection (so `merge_all()` and a user's SummarySaverHook see them) and are written
merged; `tf.summary.*` (v2) calls write through the default writer set while the step is
traced. Both are recorded on the first step of each train() call and every N steps after
it, stamped with the global step after the step, as tf.estimator's SummarySaverHook did.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import numpy as np
import tensorflow as tf

from keras_estimator.seam.internals import v1_summaries_to_collections


@contextlib.contextmanager
def summaries_every(
    every: int | None, step_before: tf.Tensor | None, call_start: tf.Tensor | None
) -> Iterator[None]:
    """Records summaries created inside on the first step of a train() call (global step
    `call_start`) and every `every` steps after it, as a fresh SummarySaverHook did.

    On exit, the v1 summaries collected in the graph are written too (merged). With
    `every` None, nothing is recorded and TF1 summary calls only join the collection
    (TensorFlow's "default summary writer not found" warning is not raised).
    """
    if not every:
        with tf.summary.record_if(False), v1_summaries_to_collections():
            yield
        return
    previous = tf.summary.experimental.get_step()
    tf.summary.experimental.set_step(step_before + 1)
    try:
        with tf.summary.record_if(tf.equal((step_before - call_start) % every, 0)):
            with v1_summaries_to_collections():
                yield
            merged = tf.compat.v1.summary.merge_all()
            if merged is not None and tf.summary.experimental.get_step() is not None:
                tf.summary.experimental.write_raw_pb(merged, step=step_before + 1)
    finally:
        tf.summary.experimental.set_step(previous)


def write_scalars(writer: tf.summary.SummaryWriter | None, values: dict, step: int) -> None:
    """Writes evaluation results (and global_step/sec) at `step` as tf.estimator did.

    Numbers become TF1 `simple_value`s (what `read_eval_metrics`, exporters and user scripts
    read), arrays become tensor summaries, serialized `Summary` bytes are re-tagged
    `<key>/<i>`; anything else is skipped, as tf.estimator skipped it. No writer (a
    non-chief worker): nothing is written.
    """
    if writer is None:
        return
    summary = tf.compat.v1.Summary()
    for name, value in values.items():
        if isinstance(value, bytes):
            try:
                parsed = tf.compat.v1.Summary.FromString(value)
            except Exception:  # noqa: BLE001  (protobuf's DecodeError; tf.estimator skipped)
                continue
            for index, item in enumerate(parsed.value):
                item.tag = f"{name}/{index}"
            summary.value.extend(parsed.value)
        elif isinstance(value, np.ndarray) and value.ndim > 0:
            item = summary.value.add(tag=name, node_name=name)
            item.tensor.CopyFrom(tf.make_tensor_proto(value))
        else:
            try:
                summary.value.add(tag=name, simple_value=float(value))
            except (TypeError, ValueError):
                continue  # not a number: tf.estimator skipped those too
    with writer.as_default():
        tf.summary.experimental.write_raw_pb(summary.SerializeToString(), step=step)
    writer.flush()
