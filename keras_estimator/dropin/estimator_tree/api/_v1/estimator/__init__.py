"""2.15's generated `tf.compat.v1.estimator` namespace: keras_estimator.v1's names."""

from keras_estimator.dropin.tree_names import public_names

globals().update(public_names("keras_estimator.v1"))
