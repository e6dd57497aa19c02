"""2.15's `mode_keys`: `ModeKeys` (TensorFlow's, which 2.15 re-exported)."""

from keras_estimator.spec.mode_keys import ModeKeys

__all__ = ["ModeKeys"]
