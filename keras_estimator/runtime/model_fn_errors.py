"""Notes for the commonest mistakes, added to an error raised inside the user's model_fn.

The error keeps its type and traceback (tests and users match on them); a note (Python 3.11's
`add_note`, shown under the traceback) says what happened, what was expected and how to fix
it, naming the mode and what the model_fn received. Covered: labels used where there are none
(predict() without a PREDICT branch; an input_fn without labels in train() / evaluate()), a
feature key the features do not have, a Keras optimizer used through the TF1 optimizer API.
"""

from __future__ import annotations

from typing import Any

from keras_estimator.engine.keras_optimizer import TF1_OPTIMIZERS
from keras_estimator.spec.mode_keys import ModeKeys

# Methods of tf.compat.v1.train.Optimizer that Keras 3 optimizers do not have.
_TF1_OPTIMIZER_METHODS = {"compute_gradients", "get_slot", "get_slot_names", "get_name"}


def describe(features: Any) -> str:
    """`{'x': float32[None, 3]}`: the features' structure with dtypes and shapes."""
    if isinstance(features, dict):
        return "{" + ", ".join(f"{k!r}: {describe(v)}" for k, v in features.items()) + "}"
    dtype, shape = getattr(features, "dtype", None), getattr(features, "shape", None)
    if dtype is None or shape is None:
        return type(features).__name__
    dims = ", ".join("None" if d is None else str(d) for d in shape.as_list())
    return f"{getattr(dtype, 'name', dtype)}[{dims}]"


def _received(mode: str, features: Any, labels: Any) -> str:
    labels_text = "None" if labels is None else describe(labels)
    return f"Received: mode={mode!r}, features={describe(features)}, labels={labels_text}"


def _missing_labels(mode: str, features: Any) -> str:
    if mode == ModeKeys.PREDICT:
        return (
            "keras_estimator: the model_fn failed in mode='infer' (predict()), where labels is "
            "None: predict() feeds features only. Expected: when mode == ModeKeys.PREDICT the "
            "model_fn returns EstimatorSpec(mode, predictions=...) before it uses labels (a "
            "loss, metrics and a train_op need labels). Fix: add `if mode == "
            "tf.estimator.ModeKeys.PREDICT: return tf.estimator.EstimatorSpec(mode, "
            "predictions={...})` before the loss. " + _received(mode, features, None)
        )
    call = "train()" if mode == ModeKeys.TRAIN else "evaluate()"
    return (
        f"keras_estimator: the model_fn failed in mode={mode!r} ({call}) with labels=None: "
        "the input_fn gave features only, no labels. Expected: for train() and evaluate() the "
        "input_fn returns (features, labels), as a Dataset of (features, labels) pairs or a "
        "(features, labels) tuple. Fix: return e.g. tf.data.Dataset.from_tensor_slices(("
        "features, labels)).batch(32) from the input_fn. " + _received(mode, features, None)
    )


def _missing_key(key: str, mode: str, features: dict, params: Any) -> str:
    where = ""
    if isinstance(params, dict) and key not in params:
        where = f" (if it was params[{key!r}]: params has keys {sorted(params)})"
    return (
        f"keras_estimator: the model_fn asked for features[{key!r}], and the features the "
        f"input_fn gave have no such key{where}. Expected one of the keys there are: "
        f"{sorted(features, key=str)}. Fix: use one of those keys in the model_fn, or name the "
        f"feature {key!r} in the input_fn. Received: mode={mode!r}, "
        f"features={describe(features)}"
    )


def _keras_optimizer_as_tf1(optimizer: Any, method: str, mode: str) -> str:
    kind = type(optimizer).__name__
    tf1 = TF1_OPTIMIZERS.get(kind, "AdamOptimizer")
    return (
        f"keras_estimator: `{method}` is the TF1 optimizer API (tf.compat.v1.train.Optimizer); "
        f"this is a Keras optimizer (keras.optimizers.{kind}), which has no {method}. Fix: use "
        f"a TF1 optimizer, tf.compat.v1.train.{tf1}(...), with compute_gradients / "
        "apply_gradients(grads_and_vars, global_step=...); or, with the Keras optimizer, "
        "grads = tf.gradients(loss, variables) then optimizer.apply_gradients(zip(grads, "
        "variables)), or return the optimizer itself as the EstimatorSpec's train_op "
        f"(keras_estimator minimises the loss). Received: optimizer={kind}, mode={mode!r}"
    )


def note_model_fn_error(exc: BaseException, mode: str, features: Any, labels: Any,
                        params: Any) -> None:  # fmt: skip
    """Adds a note to `exc` (raised by the model_fn) when it is one of the mistakes above."""
    note = None
    if labels is None and isinstance(exc, ValueError | TypeError | AttributeError):
        if "None" in str(exc) or "NoneType" in str(exc):
            note = _missing_labels(mode, features)
    if isinstance(exc, KeyError) and isinstance(features, dict) and len(exc.args) == 1:
        key = exc.args[0]
        if isinstance(key, str) and key not in features:
            note = _missing_key(key, mode, features, params)
    if isinstance(exc, AttributeError) and exc.name in _TF1_OPTIMIZER_METHODS:
        import keras

        if isinstance(exc.obj, keras.optimizers.Optimizer):
            note = _keras_optimizer_as_tf1(exc.obj, exc.name, mode)
    if note is not None and hasattr(exc, "add_note"):
        exc.add_note(note)
