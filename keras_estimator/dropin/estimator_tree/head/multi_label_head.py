"""2.15's `head/multi_label_head`: `tf.estimator.MultiLabelHead`."""

from keras_estimator.canned.heads.multi_label_head import MultiLabelHead

__all__ = ["MultiLabelHead"]
