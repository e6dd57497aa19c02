"""2.15's `model_fn`: `EstimatorSpec`, `ModeKeys`, the loss metric keys, and the spec
validators libraries call on specs they build themselves."""

from __future__ import annotations

from typing import Any

import tensorflow as tf

from keras_estimator.experimental.logit_fn import call_logit_fn
from keras_estimator.runtime.model_fn_call import verify_model_fn_args
from keras_estimator.spec.estimator_spec import (
    EstimatorSpec,
    _validate_eval_metric_ops,
    _validate_export_outputs,
    _validate_loss,
    _validate_predictions,
    _validate_scaffold,
    _validate_train_op,
    validate_spec_hooks,
)
from keras_estimator.spec.mode_keys import ModeKeys
from keras_estimator.tpu.tpu_estimator_spec import TPUEstimatorSpec as _TPUEstimatorSpec

LOSS_METRIC_KEY = "loss"
AVERAGE_LOSS_METRIC_KEY = "average_loss"

__all__ = [
    "AVERAGE_LOSS_METRIC_KEY",
    "EstimatorSpec",
    "LOSS_METRIC_KEY",
    "ModeKeys",
    "call_logit_fn",
    "_TPUEstimatorSpec",
    "_validate_eval_metric_ops",
    "_validate_scaffold",
    "verify_model_fn_args",
]


def _check_is_tensor_or_operation(x: Any, name: str) -> None:
    if not isinstance(x, tf.Operation | tf.Tensor | tf.Variable) and not hasattr(x, "op"):
        raise TypeError(f"{name} must be Operation or Tensor, given: {x}")


def _check_is_tensor(x: Any, tensor_name: str) -> Any:
    """`x` as a Tensor (a Variable's value too), or 2.15's TypeError."""
    if isinstance(x, tf.Variable):
        return x.value()
    if not isinstance(x, tf.Tensor):
        raise TypeError(f"{tensor_name} must be Tensor, given: {x}")
    return x


def _validate_estimator_spec_train_op(train_op: Any, mode: str) -> Any:
    return _validate_train_op(train_op, mode)


def _validate_estimator_spec_loss(loss: Any, mode: str) -> Any:
    return _validate_loss(loss, mode)


def _validate_estimator_spec_predictions(predictions: Any, mode: str) -> Any:
    return _validate_predictions(predictions, mode)


def _validate_estimator_spec_export_outputs(
    export_outputs: Any, predictions: Any, mode: str
) -> Any:
    return _validate_export_outputs(export_outputs, predictions, mode)


def _validate_estimator_spec_hooks(hooks: Any) -> tuple:
    return validate_spec_hooks(hooks)


def _update_variable_collection(collection_name: str, vars_to_add: list) -> None:
    """Adds the variables not yet in the TF1 collection `collection_name`."""
    collection = tf.compat.v1.get_collection_ref(collection_name)
    present = {id(v) for v in collection}
    collection.extend(v for v in vars_to_add if id(v) not in present)
