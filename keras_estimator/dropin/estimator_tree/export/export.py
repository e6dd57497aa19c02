"""2.15's `export.export`: the input receivers and the functions that build them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tensorflow as tf

from keras_estimator.export.receivers import (
    SINGLE_FEATURE_KEY,
    SINGLE_LABEL_KEY,
    SINGLE_RECEIVER_KEY,
    ServingInputReceiver,
    SupervisedInputReceiver,
    TensorServingInputReceiver,
    _check_key,
    _check_tensor,
    _placeholder_like,
    _placeholders_like,
    _wrap_and_check,
    build_parsing_serving_input_receiver_fn,
    build_raw_serving_input_receiver_fn,
    build_raw_supervised_input_receiver_fn,
)

SINGLE_FEATURE_DEFAULT_NAME = SINGLE_FEATURE_KEY
SINGLE_RECEIVER_DEFAULT_NAME = SINGLE_RECEIVER_KEY
SINGLE_LABEL_DEFAULT_NAME = SINGLE_LABEL_KEY

__all__ = [
    "_check_tensor",
    "SINGLE_FEATURE_DEFAULT_NAME",
    "SINGLE_LABEL_DEFAULT_NAME",
    "SINGLE_RECEIVER_DEFAULT_NAME",
    "ServingInputReceiver",
    "SupervisedInputReceiver",
    "TensorServingInputReceiver",
    "UnsupervisedInputReceiver",
    "build_parsing_serving_input_receiver_fn",
    "build_raw_serving_input_receiver_fn",
    "build_raw_supervised_input_receiver_fn",
    "build_supervised_input_receiver_fn_from_input_fn",
    "wrap_and_check_input_tensors",
]


class UnsupervisedInputReceiver(ServingInputReceiver):
    """2.15's receiver for an unsupervised model's inputs: a `ServingInputReceiver`."""


def wrap_and_check_input_tensors(tensors: Any, field_name: str, allow_int_keys: bool = False):
    """A single tensor as `{"feature" | "label" | "input": tensor}`, keys and values checked.

    Args:
        tensors: a Tensor, SparseTensor or RaggedTensor, or a dict of them.
        field_name: `"feature"`, `"label"` or `"receiver_tensor"`: the key a single tensor
            gets, and the word errors use.
        allow_int_keys: whether int keys are accepted besides strings.

    Returns:
        The dict.

    Raises:
        ValueError: `tensors` is None, or a key or value has the wrong type.
    """
    return _wrap_and_check(tensors, field_name, allow_int_keys)


def _check_tensor_key(name: Any, error_label: str = "feature", allow_ints: bool = False) -> None:
    _check_key(name, error_label, allow_ints)


def _placeholder_from_tensor(t: Any, default_batch_size: int | None = None) -> tf.Tensor:
    return _placeholder_like(t, default_batch_size)


def _placeholders_from_receiver_tensors_dict(
    input_vals: Any, default_batch_size: int | None = None
) -> dict | None:
    return None if input_vals is None else _placeholders_like(input_vals, default_batch_size)


def build_supervised_input_receiver_fn_from_input_fn(
    input_fn: Callable, **input_fn_args: Any
) -> Callable[[], SupervisedInputReceiver]:
    """A receiver fn whose placeholders have the dtypes and shapes of `input_fn`'s output.

    Args:
        input_fn: an Estimator input_fn returning (features, labels) or a dataset of them.
        **input_fn_args: passed to `input_fn`.

    Returns:
        A function returning a `SupervisedInputReceiver` over fresh placeholders.

    Example:
        >>> fn = build_supervised_input_receiver_fn_from_input_fn(train_input_fn)
        >>> est.experimental_export_all_saved_models("export", {"train": fn})
    """

    def specs() -> tuple[Any, Any]:
        with tf.Graph().as_default():
            result = input_fn(**input_fn_args)
            if isinstance(result, tf.data.Dataset):
                spec = result.element_spec
                features, labels = spec if isinstance(spec, tuple) else (spec, None)
            else:
                features, labels = result
            return features, labels

    features, labels = specs()
    return build_raw_supervised_input_receiver_fn(features, labels)
