"""2.15's `hooks` package: the SessionRunHook names of `tf.estimator`."""

from keras_estimator.dropin.tree_names import public_names

globals().update(public_names("keras_estimator.hooks"))
