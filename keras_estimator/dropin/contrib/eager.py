"""`tf.contrib.eager`: the name estimator scripts used from it, `list_devices`.

Estimator trainers counted GPUs with `tf.contrib.eager.list_devices()` to choose a
MirroredStrategy; TensorFlow 2 is eager already and lists devices with
`tf.config.list_logical_devices()`. The rest of tf.contrib.eager raises an error naming
its TF2 replacement.
"""

from __future__ import annotations

import tensorflow as tf

from keras_estimator.dropin.contrib.removed import removed_attribute_getattr

_INSTEAD = "TF2 eager execution (tf.function, tf.GradientTape, tf.config.list_logical_devices)"


def list_devices() -> list[str]:
    """The names of the devices this process can use, as TF 1's
    `tf.contrib.eager.list_devices()` gave them (`/job:localhost/replica:0/task:0/device:CPU:0`).

    Example:
        >>> gpus = [d for d in tf.contrib.eager.list_devices() if "/device:GPU" in d]
    """
    prefix = "/job:localhost/replica:0/task:0"
    return [
        device.name if device.name.startswith("/job:") else prefix + device.name
        for device in tf.config.list_logical_devices()
    ]


__getattr__ = removed_attribute_getattr("eager", _INSTEAD)

__all__ = ["list_devices"]
