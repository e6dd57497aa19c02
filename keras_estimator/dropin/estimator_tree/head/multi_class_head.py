"""2.15's `head/multi_class_head`: `tf.estimator.MultiClassHead`."""

from keras_estimator.canned.heads.multi_class_head import MultiClassHead

__all__ = ["MultiClassHead"]
