"""Summaries written from inside the compiled training step, every `save_summary_steps`.

As under tf.estimator: `tf.compat.v1.summary.*` ops in the model_fn go to the SUMMARIES
collection (so `merge_all()` and a user's SummarySaverHook see them) and are written
merged; `tf.summary.*` (v2) calls write through the default writer set while the step is
traced. Both are recorded on the first step of each train() call and every N steps after
it, stamped with the global step after the step, as tf.estimator's SummarySaverHook did.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import tensorflow as tf

from keras_estimator.seam import internals
from keras_estimator.seam.internals import v1_summaries_to_collections


@contextlib.contextmanager
def summaries_every(
    every: int | None, step_before: tf.Tensor | None, call_start: tf.Tensor | None
) -> Iterator[list[tf.Tensor]]:
    """Records summaries created inside on the first step of a train() call (global step
    `call_start`) and every `every` steps after it, as a fresh SummarySaverHook did.

    On exit, the v1 summaries collected in the graph are written too (merged). With
    `every` None, nothing is recorded and TF1 summary calls only join the collection
    (TensorFlow's "default summary writer not found" warning is not raised). It gives a
    list for the tensors the step computes anyway (its loss, whose gradients are taken
    later): what they need runs every step and is never made again for the summaries.
    """
    step_needs: list[tf.Tensor] = []
    if not every:
        with tf.summary.record_if(False), v1_summaries_to_collections():
            yield step_needs
        return
    assert step_before is not None and call_start is not None  # given with `every`
    previous = tf.summary.experimental.get_step()
    tf.summary.experimental.set_step(step_before + 1)
    recording = tf.equal((step_before - call_start) % every, 0)
    try:
        with tf.summary.record_if(recording):
            with v1_summaries_to_collections():
                yield step_needs
        summaries = tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.SUMMARIES)
        if summaries and tf.summary.experimental.get_step() is not None:
            remade = _SummaryInputs(summaries, step_needs)
            tf.cond(recording, lambda: _write_merged(remade, step_before + 1), tf.no_op)
    finally:
        tf.summary.experimental.set_step(previous)


def _write_merged(remade: _SummaryInputs, step: tf.Tensor) -> tf.Operation:
    """Writes the v1 summaries merged, made again inside the recording branch.

    The collection's summary ops were made where the model_fn called them, outside any
    branch: fed to the writer, they would run every step (TF1 ran them only on the steps
    its SummarySaverHook fetched them; a histogram per layer cost a canned DNN a third of
    its step time). The same ops made again here, on the same inputs, run only on the
    steps that record; the originals stay in the collection for `merge_all()` and hooks.
    So are the ops that compute only what summaries show (a layer's zero fraction: ~5%
    of a canned DNN's step), see `_SummaryInputs`.
    """
    merged = tf.raw_ops.MergeSummary(inputs=[remade(t) for t in remade.summaries])
    with tf.summary.record_if(True):
        tf.summary.experimental.write_raw_pb(merged, step=step)
    return tf.no_op()


# The v1 summary ops made again in the branch (others in the collection, added by hand,
# are used as they are).
_SUMMARY_TYPES = frozenset(
    {"MergeSummary", "ScalarSummary", "HistogramSummary", "TensorSummaryV2", "ImageSummary",
     "AudioSummaryV2"}
)  # fmt: skip


class _SummaryInputs:
    """`remade(tensor)`: a summary tensor made again in the current graph (the recording
    branch), with the ops that compute only what summaries show.

    An op is made again when it is stateless, reads no resource, has no control inputs,
    the step's own tensors (`step_needs`: its loss) do not need it, and every consumer of
    its outputs is a summary op or another such op: TF1 ran it only on the steps that
    fetched the summaries, and the same op on the same inputs gives the same values.
    Everything else (a layer's activations, a variable's read) is captured as it is. A
    tensor of another kind in the collection (added by hand, an eager one) is used as it
    is.
    """

    def __init__(self, summaries: list[tf.Tensor], step_needs: list[tf.Tensor]) -> None:
        self.summaries = summaries
        self._made: dict[Any, tf.Tensor] = {}  # by tensor.ref()
        summary_ops = {
            t.op for t in summaries if getattr(t, "op", None) is not None
            and t.op.type in _SUMMARY_TYPES
        }  # fmt: skip
        stack = list(summary_ops)
        while stack:  # the summaries merged into others are summary ops too
            op = stack.pop()
            for tensor in op.inputs:
                if tensor.op.type in _SUMMARY_TYPES and tensor.op not in summary_ops:
                    summary_ops.add(tensor.op)
                    stack.append(tensor.op)
        candidates = _ancestors([t.op for op in summary_ops for t in op.inputs],
                                lambda op: op not in summary_ops and _recomputable(op))  # fmt: skip
        candidates -= _ancestors([t.op for t in step_needs], lambda op: op in candidates)
        # Keep only ops all of whose consumers are summaries or kept ops.
        changed = True
        while changed:
            changed, kept = False, candidates | summary_ops
            for op in list(candidates):
                users = {c for t in op.outputs for c in t.consumers()}
                if not users <= kept:
                    candidates.discard(op)
                    changed = True
        self._remade_ops = candidates | summary_ops

    def __call__(self, tensor: tf.Tensor) -> tf.Tensor:
        op = getattr(tensor, "op", None)  # an eager tensor has none (AttributeError)
        if op is None or op not in self._remade_ops:
            return tensor
        # Made inputs first (a loop, not recursion: a summary of a long chain of ops).
        pending = [(op, False)]
        while pending:
            current, inputs_made = pending.pop()
            if current.outputs[0].ref() in self._made:
                continue
            if not inputs_made:
                pending.append((current, True))
                pending.extend((t.op, False) for t in current.inputs if t.op in self._remade_ops)
                continue
            inputs = [self._made.get(t.ref(), t) for t in current.inputs]
            name = current.name.rsplit("/", 1)[-1]  # its own name: what an error names
            try:
                outputs = internals.remake_op(current, inputs, name).outputs
            except (TypeError, ValueError, tf.errors.OpError):
                # An op TF will not make again as it is: the original, computed every step.
                outputs = current.outputs
            self._made.update((t.ref(), made) for t, made in zip(current.outputs, outputs))
        return self._made[tensor.ref()]


def _ancestors(ops: list[tf.Operation], within: Callable[[tf.Operation], bool]) -> set:
    """`ops` and the ops they read from, transitively, as far as `within(op)` holds."""
    found: set[tf.Operation] = set()
    stack = list(ops)
    while stack:
        op = stack.pop()
        if op in found or not within(op):
            continue
        found.add(op)
        stack.extend(t.op for t in op.inputs)
    return found


def _recomputable(op: tf.Operation) -> bool:
    """Whether `op`, made again elsewhere on the same inputs, gives the same values at no
    other cost (see _SummaryInputs)."""
    return (
        op.type != "Placeholder"  # the step's inputs and captures
        and not op.op_def.is_stateful
        and not op.control_inputs
        and bool(op.outputs)
        and all(t.dtype not in (tf.resource, tf.variant) for t in (*op.inputs, *op.outputs))
        and internals.functions_called_by(op) is not None
    )


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
