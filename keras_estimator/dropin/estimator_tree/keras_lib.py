"""2.15's `keras_lib`: `model_to_estimator` (keras_bridge/model_to_estimator.py).

Unavailable here (they raise `UnavailableError` when called): the tf.keras 2 internals
2.15's conversion went through (`_clone_and_build_model`, `_create_keras_model_fn`,
`_convert_estimator_io_to_keras`, `_save_first_checkpoint`, ...). keras_estimator converts
a Keras 3 model its own way; call `model_to_estimator`.
"""

from __future__ import annotations

from typing import Any

import keras
import tensorflow as tf

from keras_estimator.dropin.unavailable import unavailable_function
from keras_estimator.keras_bridge.model_to_estimator import FormattedKeyError, model_to_estimator

__all__ = ["FormattedKeyError", "model_to_estimator"]

_REASON = "it is a step of 2.15's conversion through tf.keras 2's graph-mode internals"
_INSTEAD = "call keras_estimator's model_to_estimator(keras_model=..., model_dir=...)"
_clone_and_build_model = unavailable_function("keras_lib._clone_and_build_model", _REASON, _INSTEAD)
_create_keras_model_fn = unavailable_function("keras_lib._create_keras_model_fn", _REASON, _INSTEAD)
_convert_estimator_io_to_keras = unavailable_function(
    "keras_lib._convert_estimator_io_to_keras", _REASON, _INSTEAD
)
_convert_keras_metrics_to_estimator = unavailable_function(
    "keras_lib._convert_keras_metrics_to_estimator", _REASON, _INSTEAD
)
_save_first_checkpoint = unavailable_function("keras_lib._save_first_checkpoint", _REASON, _INSTEAD)
_get_file_from_google_storage = unavailable_function(
    "keras_lib._get_file_from_google_storage",
    "no network access is assumed",
    "copy the file locally and pass its path",
)


def _any_weight_initialized(keras_model: keras.Model) -> bool:
    """Whether any of the model's weights has a nonzero value."""
    return any(bool(tf.reduce_any(tf.not_equal(w, 0))) for w in keras_model.weights)


def _cast_tensor_to_floatx(x: Any) -> tf.Tensor:
    """`x` as a tensor of Keras' float type (unchanged if it already is)."""
    x = tf.convert_to_tensor(x)
    return x if x.dtype == keras.config.floatx() else tf.cast(x, keras.config.floatx())


def _convert_tensor(x: Any) -> Any:
    """`x` as a tensor, unless it is a SparseTensor already."""
    return x if isinstance(x, tf.SparseTensor) else tf.convert_to_tensor(x)


def _assert_valid_model(model: Any, custom_objects: Any = None) -> None:
    if not isinstance(model, keras.Model):
        raise ValueError(f"keras_model must be a keras.Model; given {type(model).__name__}.")


def _extract_sample_weight_tensors(features: Any) -> tuple[Any, Any]:
    """(features, sample_weights): the `sample_weights` key taken out of a features dict."""
    if isinstance(features, dict) and "sample_weights" in features:
        features = dict(features)
        return features, features.pop("sample_weights")
    return features, None


def standardize_sample_weights(x_weight: Any, output_names: list) -> list:
    """Sample weights as a list, one per model output (None where not given)."""
    if x_weight is None or (isinstance(x_weight, list | tuple) and not x_weight):
        return [None for _ in output_names]
    if isinstance(x_weight, dict):
        return [x_weight.get(name) for name in output_names]
    if isinstance(x_weight, list | tuple):
        if len(x_weight) != len(output_names):
            raise ValueError(
                f"Provided `sample_weights` was a list of {len(x_weight)} "
                f"elements, but the model has {len(output_names)} outputs."
            )
        return list(x_weight)
    if len(output_names) == 1:
        return [x_weight]
    raise ValueError(
        "The model has multiple outputs, so `sample_weights` should be a list or a dict."
    )
