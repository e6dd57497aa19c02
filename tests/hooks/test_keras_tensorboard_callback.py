"""Keras' TensorBoard callback in `train(hooks=)` writes its event files, as under `fit()`."""

import glob
import os

import keras
import numpy as np
import tensorflow as tf
from helpers import dataset_input_fn, make_estimator


def scalars(directory):
    """{tag: [(step, value), ...]} of the v2 scalar summaries in `directory`'s event files."""
    found = {}
    for path in glob.glob(os.path.join(directory, "events.*")):
        for event in tf.compat.v1.train.summary_iterator(path):
            for value in event.summary.value:
                number = float(tf.make_ndarray(value.tensor))
                found.setdefault(value.tag, []).append((event.step, number))
    return found


def test_tensorboard_callback_writes_batch_and_epoch_losses(tmp_path):
    x = np.random.RandomState(0).randn(64, 8).astype(np.float32)
    y = (x[:, 0] > 0).astype(np.int64)
    est = make_estimator(tmp_path / "model", params={"n_classes": 2})
    log_dir = str(tmp_path / "logs")
    callback = keras.callbacks.TensorBoard(log_dir=log_dir, update_freq=4)
    est.train(dataset_input_fn(x, y, 16, repeat=True), steps=12, hooks=[callback])
    written = scalars(os.path.join(log_dir, "train"))
    # fit() counts batches from 1 and writes every update_freq-th; the whole call is one epoch.
    assert [step for step, _ in written["batch_loss"]] == [4, 8, 12]
    assert [step for step, _ in written["epoch_loss"]] == [0]
    assert all(np.isfinite(value) for _, value in written["batch_loss"] + written["epoch_loss"])
