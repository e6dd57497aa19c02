"""2.15's `estimator_lib`: the whole `tf.estimator` namespace in one module."""

from keras_estimator.dropin.tree_names import public_names

globals().update(public_names("keras_estimator"))
