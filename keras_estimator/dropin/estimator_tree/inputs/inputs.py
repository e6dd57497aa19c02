"""2.15's `inputs.inputs`: `numpy_input_fn` and `pandas_input_fn`."""

from keras_estimator.inputs.numpy_io import numpy_input_fn
from keras_estimator.inputs.pandas_io import pandas_input_fn

__all__ = ["numpy_input_fn", "pandas_input_fn"]
