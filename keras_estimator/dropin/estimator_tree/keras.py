"""TensorFlow 2.15's `tensorflow.python.estimator.keras` (a forward of `keras_lib`)."""

from keras_estimator.keras_bridge.model_to_estimator import FormattedKeyError, model_to_estimator

__all__ = ["FormattedKeyError", "model_to_estimator"]
