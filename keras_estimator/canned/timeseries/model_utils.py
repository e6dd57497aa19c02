"""Helpers of the time-series models: a TF1 dense layer, and prediction times (2.15's)."""

from __future__ import annotations

from typing import Any

import numpy as np
import tensorflow as tf

from keras_estimator.canned.timeseries import feature_keys


def fully_connected(
    inp: Any, inp_size: int, layer_size: int, name: str,
    activation: Any = tf.nn.relu, dtype: Any = tf.float32,
) -> tf.Tensor:  # fmt: skip
    """`activation(inp @ {name}_weight + {name}_bias)`, with variables from
    `tf.compat.v1.get_variable` (so they live in the enclosing variable scope).

    Args:
        inp: a [batch, inp_size] tensor.
        inp_size: its last dimension.
        layer_size: the number of outputs.
        name: the prefix of the two variables' names.
        activation: a callable, or None for a linear layer.
        dtype: the variables' dtype.

    Returns:
        The [batch, layer_size] output.
    """
    weight = tf.compat.v1.get_variable(f"{name}_weight", shape=[inp_size, layer_size], dtype=dtype)
    bias = tf.compat.v1.get_variable(
        f"{name}_bias", shape=[layer_size], dtype=dtype, initializer=tf.zeros_initializer()
    )
    output = tf.matmul(inp, weight) + bias
    if activation is not None:
        if not callable(activation):
            raise TypeError(
                f"fully_connected's activation must be a callable (tf.nn.relu) or None; "
                f"received {activation!r}."
            )
        output = activation(output)
    return output


def canonicalize_times_or_steps_from_output(
    times: Any, steps: Any, previous_model_output: dict
) -> np.ndarray:
    """The [batch, window] times to predict: `times` as given (checked to come after the
    previous output's), or the `steps` times right after the previous output's last time.

    Args:
        times: prediction times ([window] or [batch, window]), or None.
        steps: how many times to predict after the previous output, or None.
        previous_model_output: a result of evaluation or filtering (has `times`).

    Returns:
        A [batch, window] integer array.

    Raises:
        ValueError: unless exactly one of `times` and `steps` is given, or if `times` does
            not match the previous output's batch or does not come after it.
    """
    if (steps is None) == (times is None):
        raise ValueError(
            "Give exactly one of `steps` (how many times after the previous output) and "
            f"`times` (the times themselves). Received steps={steps!r}, times={times!r}."
        )
    previous = np.asarray(previous_model_output[feature_keys.FilteringResults.TIMES])
    if steps is not None:
        return previous[:, -1:] + 1 + np.arange(steps)[None, :]
    times = np.asarray(times)
    if times.ndim != 2:
        times = times[None, ...]
    if previous.shape[0] != times.shape[0]:
        raise ValueError(
            "`times` must have a batch dimension matching the previous model output (got a "
            f"batch dimension of {times.shape[0]} for `times` and {previous.shape[0]} for the "
            "previous model output)."
        )
    if not (previous[:, -1] < times[:, 0]).all():
        raise ValueError(
            "Prediction times must be after the corresponding previous model output: the "
            f"previous output ends at {previous[:, -1].tolist()}, `times` start at "
            f"{times[:, 0].tolist()}."
        )
    return times
