"""`tf.contrib.cluster_resolver`: TensorFlow's cluster resolvers under their TF1 path."""

import tensorflow as tf

TPUClusterResolver = tf.distribute.cluster_resolver.TPUClusterResolver
TFConfigClusterResolver = tf.distribute.cluster_resolver.TFConfigClusterResolver
SimpleClusterResolver = tf.distribute.cluster_resolver.SimpleClusterResolver

__all__ = ["SimpleClusterResolver", "TFConfigClusterResolver", "TPUClusterResolver"]
