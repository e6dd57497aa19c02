"""2.15's `head/binary_class_head`: `tf.estimator.BinaryClassHead`."""

from keras_estimator.canned.heads.binary_class_head import BinaryClassHead

__all__ = ["BinaryClassHead"]
