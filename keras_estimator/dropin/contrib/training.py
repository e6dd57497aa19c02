"""`tf.contrib.training`: `HParams` and the checkpoint helpers estimator code used."""

from __future__ import annotations

import tensorflow as tf

from keras_estimator.dropin.contrib.hparams import HParams, parse_values
from keras_estimator.dropin.contrib.removed import removed_attribute_getattr

checkpoints_iterator = tf.compat.v1.train.checkpoints_iterator


__getattr__ = removed_attribute_getattr(
    "training",
    "tf.compat.v1.train (e.g. checkpoints_iterator), tf.data for input "
    "queues, or tf_slim.training for create_train_op / evaluation loops",
)


__all__ = ["HParams", "checkpoints_iterator", "parse_values"]
