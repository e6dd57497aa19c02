"""2.15's `inputs/numpy_io`: `numpy_input_fn` and its key helpers."""

from __future__ import annotations

from typing import Any

import numpy as np

from keras_estimator.inputs.numpy_io import numpy_input_fn

__all__ = ["numpy_input_fn"]


def _get_unique_target_key(features: dict, target_key_name: str) -> str:
    """`target_key_name`, with `_n` appended until no feature has that key."""
    target_key = target_key_name
    while target_key in features:
        target_key += "_n"
    return target_key


def _validate_and_convert_features(x: Any) -> dict:
    """`x` (a dict of arrays, or one array) as a dict of numpy arrays, checked."""
    if isinstance(x, dict):
        if not x:
            raise ValueError("x cannot be an empty dict")
        return {key: np.asarray(value) for key, value in x.items()}
    if isinstance(x, np.ndarray):
        if x.size == 0:
            raise ValueError("x cannot be an empty array")
        return {"__direct_np_input__": x}
    raise TypeError(f"x must be a dict or array; got {type(x).__name__}")
