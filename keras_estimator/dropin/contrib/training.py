"""`tf.contrib.training`: `HParams` and the checkpoint helpers estimator code used."""

from __future__ import annotations

from typing import Any

import tensorflow as tf

from keras_estimator.dropin.contrib.hparams import HParams, parse_values
from keras_estimator.dropin.contrib.removed import removed_attribute_error

checkpoints_iterator = tf.compat.v1.train.checkpoints_iterator


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    raise removed_attribute_error(
        "training", name, "tf.compat.v1.train (e.g. checkpoints_iterator), tf.data for input "
        "queues, or tf_slim.training for create_train_op / evaluation loops",
    )  # fmt: skip


__all__ = ["HParams", "checkpoints_iterator", "parse_values"]
