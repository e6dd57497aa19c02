"""2.15's `hooks.basic_session_run_hooks`: TensorFlow's TF1 hooks, which run on our loop."""

from keras_estimator.dropin.tree_names import public_names

globals().update(public_names("keras_estimator.hooks"))
