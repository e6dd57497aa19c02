"""`tf.estimator.experimental.call_logit_fn`: call a logit_fn with the arguments it takes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tensorflow as tf

from keras_estimator.utils.fn_args import fn_args

_OPTIONAL_ARGS = ("mode", "params", "config")


def call_logit_fn(
    logit_fn: Callable, features: Any, mode: str, params: Any, config: Any
) -> tf.Tensor | dict[str, tf.Tensor]:
    """Calls `logit_fn(features=..., [mode=...], [params=...], [config=...])`, passing only
    the arguments it names, as tf.estimator 2.15's `call_logit_fn`.

    Returns:
        The logit_fn's result: a Tensor, or a dict of string to Tensor.

    Raises:
        ValueError: the logit_fn returned anything else.

    Example:
        >>> logit_fn = dnn_logit_fn_builder(3, [16], columns, tf.nn.relu, None, None, False)
        >>> logits = call_logit_fn(logit_fn, features, mode, params, config)
    """
    names = fn_args(logit_fn)
    given = {"mode": mode, "params": params, "config": config}
    kwargs = {name: given[name] for name in _OPTIONAL_ARGS if name in names}
    result = logit_fn(features=features, **kwargs)
    is_tensor = isinstance(result, tf.Tensor)
    is_tensor_dict = isinstance(result, dict) and all(
        isinstance(key, str) and isinstance(value, tf.Tensor) for key, value in result.items()
    )
    if not (is_tensor or is_tensor_dict):
        raise ValueError(
            "logit_fn should return a Tensor or a dictionary mapping strings to Tensors.  "
            f"logit_fn returned: {result}"
        )
    return result
