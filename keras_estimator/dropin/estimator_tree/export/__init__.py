"""2.15's `export` package: receivers, export outputs and exporters."""

from keras_estimator.dropin.tree_names import public_names

globals().update(public_names("keras_estimator.export"))
