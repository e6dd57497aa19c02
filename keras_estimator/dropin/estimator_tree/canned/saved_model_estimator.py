"""2.15's `canned/saved_model_estimator.py`: the helpers over a SavedModel's signatures, and
`SavedModelEstimator`, which cannot work here.

Not available on TensorFlow 2.21 (each raises a clear error when used):

- `SavedModelEstimator`: 2.15 imported the SavedModel's TF1 MetaGraph into the graph its
  Estimator built (`import_meta_graph` with an input map, then its Saver restored the
  variables). keras_estimator runs each mode as a compiled Keras step over variables it
  owns, with no MetaGraph import; a SavedModel's own functions are what TF 2 runs instead.
  Use `tf.saved_model.load(export_dir).signatures["serving_default"]` (or
  `keras.layers.TFSMLayer`) to predict, and for training or evaluation the Estimator
  (model_fn and model_dir) that exported it.

The helpers (`_generate_input_map`, `_check_same_dtype_and_shape`, `_extract_eval_metrics`,
`_validate_and_extract_outputs`, `_get_saved_model_ckpt`, `_clear_saved_model_collections`)
work as 2.15's on signature protos and graph tensors.
"""

from __future__ import annotations

import os
from typing import Any

import tensorflow as tf

from keras_estimator.spec.mode_keys import ModeKeys

__all__ = [
    "SavedModelEstimator",
    "_check_same_dtype_and_shape",
    "_clear_saved_model_collections",
    "_extract_eval_metrics",
    "_generate_input_map",
    "_get_saved_model_ckpt",
    "_validate_and_extract_outputs",
]
_SEPARATOR = "/"
_SUPERVISED_METHODS = {
    ModeKeys.TRAIN: "tensorflow/supervised/training",
    ModeKeys.EVAL: "tensorflow/supervised/eval",
}


class SavedModelEstimator:
    """2.15's Estimator over an exported SavedModel; not available on TensorFlow 2.21.

    Raises:
        NotImplementedError: always (see the module docstring for what to use instead).
    """

    def __init__(self, saved_model_dir: Any, model_dir: Any = None) -> None:
        raise NotImplementedError(
            "SavedModelEstimator is not available with keras_estimator: tf.estimator 2.15 "
            "imported the SavedModel's TF1 MetaGraph into its own graph, and keras_estimator "
            "runs model_fns as compiled Keras steps with no MetaGraph import. Expected a "
            "model_fn. Fix: to predict, call tf.saved_model.load(saved_model_dir)"
            ".signatures['serving_default'] (or wrap it in keras.layers.TFSMLayer); to train "
            "or evaluate, use the Estimator (model_fn and model_dir) that exported it. "
            f"Received: saved_model_dir={saved_model_dir!r}"
        )


def _get_saved_model_ckpt(saved_model_dir: Any) -> str:
    """The variables checkpoint prefix inside a SavedModel directory.

    Raises:
        ValueError: if the directory holds no `variables/variables.index`.
    """
    prefix = os.path.join(os.fspath(saved_model_dir), "variables", "variables")
    if not tf.io.gfile.exists(prefix + ".index"):
        raise ValueError(
            f"Directory provided has an invalid SavedModel format: {saved_model_dir} (no "
            "variables/variables.index). Expected the directory export_saved_model returned."
        )
    return prefix


def _clear_saved_model_collections() -> None:
    """Empties the default graph's collections a SavedModel builder expects empty."""
    v1 = tf.compat.v1
    for key in (tf.saved_model.ASSETS_KEY, v1.saved_model.LEGACY_INIT_OP_KEY,
                v1.saved_model.MAIN_OP_KEY, "saved_model_train_op"):  # fmt: skip
        del v1.get_collection_ref(key)[:]


def _check_same_dtype_and_shape(tensor: Any, tensor_info: Any, name: str) -> None:
    """Raises ValueError unless `tensor` has the dtype and a shape compatible with the
    `TensorInfo` proto."""
    expected_dtype = tf.dtypes.as_dtype(tensor_info.dtype)
    expected_shape = tf.TensorShape(tensor_info.tensor_shape)
    dtype_error = tensor.dtype != expected_dtype
    shape_error = not tensor.shape.is_compatible_with(expected_shape)
    if dtype_error or shape_error:
        message = f"Tensor shape and/or dtype validation failed for input {name}:"
        if dtype_error:
            message += f"\n\tExpected dtype: {expected_dtype}, Got: {tensor.dtype}"
        if shape_error:
            message += f"\n\tExpected shape: {expected_shape}, Got: {tensor.shape}"
        raise ValueError(message)


def _as_dict(tensors: Any, default_key: str) -> dict:
    return tensors if isinstance(tensors, dict) else {default_key: tensors}


def _generate_input_map(signature_def: Any, features: Any, labels: Any) -> dict:
    """`{input tensor name (and "^name"): the feature or label tensor}` for a signature.

    Raises:
        ValueError: if an input of the signature is in neither `features` nor `labels`, or
            a tensor's dtype / shape does not match.
    """
    features = _as_dict(features, "feature")
    labels = None if labels is None else _as_dict(labels, "label")
    input_map = {}
    for key, info in signature_def.inputs.items():
        name = info.name.split(":")[0]
        if key in features:
            tensor = features[key]
        elif labels is not None and key in labels:
            tensor = labels[key]
        else:
            raise ValueError(
                f'Key "{key}" not found in features or labels passed in to the model '
                f"function. All required keys: {list(signature_def.inputs)}"
            )
        _check_same_dtype_and_shape(tensor, info, key)
        input_map[name] = input_map["^" + name] = tensor
    return input_map


def _extract_eval_metrics(output_dict: dict) -> dict:
    """`{metric name: (value, update_op)}` from `metrics/<name>/value` and
    `metrics/<name>/update_op` outputs (both must be there)."""
    metrics = {}
    for key, tensor in output_dict.items():
        parts = key.split(_SEPARATOR)
        if parts[0] == "metrics" and parts[-1] == "value":
            name = _SEPARATOR.join(parts[:-1])
            update = f"{name}{_SEPARATOR}update_op"
            if update in output_dict:
                metrics[name] = (tensor, output_dict[update])
    return metrics


def _validate_and_extract_outputs(mode: str, output_dict: dict, method_name: str) -> tuple:
    """`(loss, predictions, metrics)` of a signature's outputs for `mode`.

    Raises:
        RuntimeError: if a TRAIN / EVAL signature has another method name.
    """
    if mode == ModeKeys.PREDICT:
        return None, output_dict, None
    expected = _SUPERVISED_METHODS.get(mode, _SUPERVISED_METHODS[ModeKeys.TRAIN])
    if method_name != expected:
        raise RuntimeError(
            f"Invalid SignatureDef method name for mode {mode}.\n\tExpected: {expected}\n\t"
            f"Got: {method_name}\nPlease ensure that the SavedModel was exported with "
            "`tf.estimator.experimental_export_all_saved_models()`."
        )
    predictions = {k: v for k, v in output_dict.items() if k.split(_SEPARATOR)[0] == "predictions"}
    return output_dict["loss"], predictions, _extract_eval_metrics(output_dict)
