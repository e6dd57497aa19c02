"""2.15's `inputs/pandas_io`: `pandas_input_fn`."""

from __future__ import annotations

import importlib.util

from keras_estimator.dropin.estimator_tree.inputs.numpy_io import _get_unique_target_key
from keras_estimator.inputs.pandas_io import pandas_input_fn

HAS_PANDAS = importlib.util.find_spec("pandas") is not None

__all__ = ["HAS_PANDAS", "pandas_input_fn", "_get_unique_target_key"]
