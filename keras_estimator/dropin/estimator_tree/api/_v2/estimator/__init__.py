"""2.15's generated `tf.estimator` namespace: keras_estimator's names."""

from keras_estimator.dropin.tree_names import public_names

globals().update(public_names("keras_estimator"))
