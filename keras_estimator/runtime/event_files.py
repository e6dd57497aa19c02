"""Scalars read back from a directory's TensorBoard event files, by global step.

What train() and evaluate() wrote (the training `loss`, `global_step/sec`, evaluation
metrics) is in model_dir's event files, so anything that needs those numbers later — after a
kernel restart, or for runs made by another process — reads them here.
"""

from __future__ import annotations

import collections
import logging
import os

import tensorflow as tf

from keras_estimator.seam import internals

logger = logging.getLogger("keras_estimator")


def _records(path: str) -> tuple[list[bytes], Exception | None]:
    """The file's records, and the error that ended the read early (a corrupted or
    half-written file), if any. tf.data, not tf.compat.v1.train.summary_iterator: its
    tf_record_iterator logs a deprecation warning; eager also inside a user's `tf.Graph()`."""
    records = []
    with internals.eager_mode():
        iterator = iter(tf.data.TFRecordDataset(path))
        while True:
            try:
                records.append(next(iterator).numpy())
            except StopIteration:
                return records, None
            except tf.errors.DataLossError as exc:
                return records, exc


def _read_file(path: str) -> dict[int, dict[str, float]]:
    by_step: dict[int, dict[str, float]] = collections.defaultdict(dict)
    records, error = _records(path)
    for record in records:
        event = tf.compat.v1.Event.FromString(record)
        for value in event.summary.value:
            if value.HasField("simple_value"):
                by_step[event.step][value.tag] = value.simple_value
            elif value.HasField("tensor") and not value.tensor.tensor_shape.dim:
                try:
                    by_step[event.step][value.tag] = float(tf.make_ndarray(value.tensor))
                except (TypeError, ValueError):
                    continue  # a string or other non-number scalar summary
    if error is not None:
        logger.warning("Skipping the rest of %s (corrupted: %s).", path, error)
    return dict(by_step)


class ScalarReader:
    """Reads event files' scalars, keeping what it read of each file: an unchanged file
    (same size and mtime) is not read again by the same reader (a history, a hook that
    polls an evaluation directory)."""

    def __init__(self) -> None:
        # path -> ((size, mtime), {step: {tag: value}})
        self._files: dict[str, tuple[tuple[int, float], dict[int, dict[str, float]]]] = {}

    def read(self, directory: str) -> collections.OrderedDict:
        """`{global_step: {tag: value}}` of the scalar summaries in `directory`'s event
        files (not its subdirectories), in step order; later files win for the same step
        and tag."""
        if not tf.io.gfile.isdir(directory):
            return collections.OrderedDict()
        by_step: dict[int, dict[str, float]] = collections.defaultdict(dict)
        for path in sorted(tf.io.gfile.glob(os.path.join(directory, "events.*"))):
            try:
                stat = tf.io.gfile.stat(path)
                key = (stat.length, stat.mtime_nsec)
            except tf.errors.OpError:
                continue  # removed since the listing
            kept = self._files.get(path)
            if kept is None or kept[0] != key:
                kept = self._files[path] = (key, _read_file(path))
            for step, values in kept[1].items():
                by_step[step].update(values)
        return collections.OrderedDict(sorted(by_step.items()))


def read_scalars(directory: str) -> collections.OrderedDict:
    """`ScalarReader().read(directory)`: every file read."""
    return ScalarReader().read(directory)
