"""`tf.contrib.cluster_resolver`: TensorFlow's cluster resolvers under their TF1 path."""

import tensorflow as tf

from keras_estimator.dropin.contrib.removed import removed_attribute_getattr

TPUClusterResolver = tf.distribute.cluster_resolver.TPUClusterResolver
TFConfigClusterResolver = tf.distribute.cluster_resolver.TFConfigClusterResolver
SimpleClusterResolver = tf.distribute.cluster_resolver.SimpleClusterResolver


__getattr__ = removed_attribute_getattr("cluster_resolver", "tf.distribute.cluster_resolver")


__all__ = ["SimpleClusterResolver", "TFConfigClusterResolver", "TPUClusterResolver"]
