"""Compatibility pieces that make TF1-era code importable on TF 2.16+ / Keras 3."""

from keras_estimator.compat.v1_layers_install import install_v1_layers

__all__ = ["install_v1_layers"]
