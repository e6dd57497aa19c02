"""`tf.contrib.cluster_resolver`: TensorFlow's cluster resolvers under their TF1 path."""

from typing import Any

import tensorflow as tf

from keras_estimator.dropin.contrib.removed import removed_attribute_error

TPUClusterResolver = tf.distribute.cluster_resolver.TPUClusterResolver
TFConfigClusterResolver = tf.distribute.cluster_resolver.TFConfigClusterResolver
SimpleClusterResolver = tf.distribute.cluster_resolver.SimpleClusterResolver


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    raise removed_attribute_error("cluster_resolver", name, "tf.distribute.cluster_resolver")


__all__ = ["SimpleClusterResolver", "TFConfigClusterResolver", "TPUClusterResolver"]
