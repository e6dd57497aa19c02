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
    recording = tf.equal((step_before - call_start) % every, 0)
    try:
        with tf.summary.record_if(recording):
            with v1_summaries_to_collections():
                yield
        summaries = tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.SUMMARIES)
        if summaries and tf.summary.experimental.get_step() is not None:
            tf.cond(recording, lambda: _write_merged(summaries, step_before + 1), tf.no_op)
    finally:
        tf.summary.experimental.set_step(previous)


def _write_merged(summaries: list[tf.Tensor], step: tf.Tensor) -> tf.Operation:
    """Writes the v1 summaries merged, made again inside the recording branch.

    The collection's summary ops were made where the model_fn called them, outside any
    branch: fed to the writer, they would run every step (TF1 ran them only on the steps
    its SummarySaverHook fetched them; a histogram per layer cost a canned DNN a third of
    its step time). The same ops made again here, on the same inputs, run only on the
    steps that record; the originals stay in the collection for `merge_all()` and hooks.
    """
    merged = tf.raw_ops.MergeSummary(inputs=[_made_again(t) for t in summaries])
    with tf.summary.record_if(True):
        tf.summary.experimental.write_raw_pb(merged, step=step)
    return tf.no_op()


def _made_again(summary: tf.Tensor) -> tf.Tensor:
    """`summary`'s v1 summary op made again in the current graph on its inputs (captured),
    under its own name (what an error names); a tensor of another kind (added to the
    collection by hand, eager ones included) is used as it is."""
    op = getattr(summary, "op", None)  # an eager tensor has none (AttributeError)
    if op is None:
        return summary
    inputs, name = op.inputs, op.name.rsplit("/", 1)[-1]
    if op.type == "MergeSummary":
        return tf.raw_ops.MergeSummary(inputs=[_made_again(t) for t in inputs], name=name)
    if op.type == "ScalarSummary":
        return tf.raw_ops.ScalarSummary(tags=inputs[0], values=inputs[1], name=name)
    if op.type == "HistogramSummary":
        return tf.raw_ops.HistogramSummary(tag=inputs[0], values=inputs[1], name=name)
    if op.type == "TensorSummaryV2":
        return tf.raw_ops.TensorSummaryV2(
            tag=inputs[0], tensor=inputs[1], serialized_summary_metadata=inputs[2], name=name
        )
    if op.type == "ImageSummary":
        return tf.raw_ops.ImageSummary(
            tag=inputs[0], tensor=inputs[1], max_images=op.get_attr("max_images"),
            bad_color=op.get_attr("bad_color"), name=name,
        )  # fmt: skip
    if op.type == "AudioSummaryV2":
        return tf.raw_ops.AudioSummaryV2(
            tag=inputs[0], tensor=inputs[1], sample_rate=inputs[2],
            max_outputs=op.get_attr("max_outputs"), name=name,
        )  # fmt: skip
    return summary


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
