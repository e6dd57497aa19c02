"""Serving input receivers: what a SavedModel's signatures take and how it becomes features.

A `serving_input_receiver_fn` is called while the export is traced, so TF1-style code
(`tf.compat.v1.placeholder`, `tf.io.parse_example`) works in it as it did under
tf.estimator's export graph.
"""

from __future__ import annotations

import collections
from collections.abc import Callable
from typing import Any

import tensorflow as tf

_V1 = tf.compat.v1
SINGLE_FEATURE_KEY = "feature"
SINGLE_RECEIVER_KEY = "input"
SINGLE_LABEL_KEY = "label"


_SINGLE_KEYS = {
    "feature": SINGLE_FEATURE_KEY,
    "label": SINGLE_LABEL_KEY,
    "receiver_tensor": SINGLE_RECEIVER_KEY,
    "receiver_tensors_alternative": SINGLE_RECEIVER_KEY,
}


def _is_tensorish(value: Any) -> bool:
    return isinstance(value, (tf.Tensor, tf.SparseTensor, tf.RaggedTensor))


def _check_tensor(tensor: Any, name: Any, label: str = "feature") -> None:
    """tf.estimator 2.15: a Tensor, SparseTensor or RaggedTensor; also an object with a
    `.tensor` that converts to a Tensor (LabeledTensor), kept as given."""
    if _is_tensorish(tensor):
        return
    if hasattr(tensor, "tensor"):
        try:
            tf.convert_to_tensor(tensor)
            return
        except (TypeError, ValueError):
            pass
    shown = f" {name}" if name is not None else ""
    raise ValueError(
        f"{label}{shown} must be a Tensor, SparseTensor, or RaggedTensor. Expected graph "
        "tensors built in the receiver fn, e.g. tf.compat.v1.placeholder(...) or the output "
        "of tf.io.parse_example. Fix: convert constants with tf.convert_to_tensor(...). "
        f"Received: {label}{shown} of type {type(tensor).__name__}"
    )


def _check_key(name: Any, label: str, allow_ints: bool) -> None:
    if isinstance(name, str) or (allow_ints and isinstance(name, int)):
        return
    kinds = "strings or ints" if allow_ints else "strings"
    raise ValueError(
        f"{label} keys must be {kinds}: {name}. Expected the dict keys to be {kinds}. "
        "Fix: use string keys, e.g. "
        f"{{'x': tensor}}. Received: key {name!r} of type {type(name).__name__}"
    )


def _wrap_and_check(tensors: Any, label: str, allow_int_keys: bool = False) -> dict:
    """As tf.estimator 2.15's `wrap_and_check_input_tensors`: a single tensor becomes a
    one-entry dict keyed `feature` / `label` / `input`; keys and values are checked."""
    if tensors is None:
        raise ValueError(
            f"{label}s must be defined. Expected a Tensor or a dict of them. Fix: pass the "
            f"{label}s built in the receiver fn. Received: {label}s=None"
        )
    if not isinstance(tensors, dict):
        tensors = {_SINGLE_KEYS[label]: tensors}
    for name, tensor in tensors.items():
        _check_key(name, label, allow_int_keys)
        _check_tensor(tensor, name, label)
    return tensors


def _wrap_features(features: Any, what: str = "feature") -> dict[Any, Any]:
    return dict(_wrap_and_check(features, what, allow_int_keys=True))


def _wrap_receiver_tensors(receiver_tensors: Any, label: str = "receiver_tensor") -> dict:
    return dict(_wrap_and_check(receiver_tensors, label))


def _wrap_alternatives(alternatives: Any) -> dict[str, dict[str, tf.Tensor]] | None:
    if alternatives is None:
        return None
    if not isinstance(alternatives, dict):
        raise ValueError(
            f"receiver_tensors_alternatives must be a dict: {alternatives}. Expected "
            "{name: tensor or {key: tensor}}. Fix: name each alternative group, e.g. "
            "{'raw': {'x': x}}. "
            f"Received: type(receiver_tensors_alternatives)={type(alternatives).__name__}"
        )
    return {
        name: _wrap_receiver_tensors(tensors, "receiver_tensors_alternative")
        for name, tensors in alternatives.items()
    }


class ServingInputReceiver(
    collections.namedtuple(
        "ServingInputReceiver", ["features", "receiver_tensors", "receiver_tensors_alternatives"]
    )
):
    """Features for the model_fn and the tensors a serving request feeds.

    A single tensor is keyed `feature` / `input`; `receiver_tensors_alternatives` adds
    signatures named `<alternative>:<output>` that are fed at other points (for
    example the parsed features, downstream of `tf.io.parse_example`).

    Example:
        >>> def serving_input_receiver_fn():
        ...     x = tf.compat.v1.placeholder(tf.float32, [None, 4], name="x")
        ...     return ServingInputReceiver({"x": x}, {"x": x})
    """

    def __new__(
        cls, features: Any, receiver_tensors: Any, receiver_tensors_alternatives: Any = None
    ) -> ServingInputReceiver:
        return super().__new__(
            cls,
            features=_wrap_features(features),
            receiver_tensors=_wrap_receiver_tensors(receiver_tensors),
            receiver_tensors_alternatives=_wrap_alternatives(receiver_tensors_alternatives),
        )


class TensorServingInputReceiver(
    collections.namedtuple(
        "TensorServingInputReceiver",
        ["features", "receiver_tensors", "receiver_tensors_alternatives"],
    )
):
    """Like ServingInputReceiver, but the model_fn gets one tensor as `features`, not a dict.

    Example:
        >>> x = tf.compat.v1.placeholder(tf.float32, [None, 4])
        >>> TensorServingInputReceiver(features=x, receiver_tensors={"x": x})
    """

    def __new__(
        cls, features: Any, receiver_tensors: Any, receiver_tensors_alternatives: Any = None
    ) -> TensorServingInputReceiver:
        if features is None:
            raise ValueError(
                "features must be defined. Expected the one Tensor the model_fn gets as "
                "features. Fix: pass the tensor built in the receiver fn. Received: features=None"
            )
        _check_tensor(features, None)
        return super().__new__(
            cls,
            features=features,
            receiver_tensors=_wrap_receiver_tensors(receiver_tensors),
            receiver_tensors_alternatives=_wrap_alternatives(receiver_tensors_alternatives),
        )


class SupervisedInputReceiver(
    collections.namedtuple("SupervisedInputReceiver", ["features", "labels", "receiver_tensors"])
):
    """Features, labels and receiver tensors, for exports of the TRAIN / EVAL graphs.

    Features and labels are kept as given (a tensor or a dict of them), as in tf.estimator;
    only `receiver_tensors` is wrapped into a dict (a single tensor is keyed `input`).
    """

    def __new__(cls, features: Any, labels: Any, receiver_tensors: Any) -> SupervisedInputReceiver:
        _wrap_features(features)  # validation only
        _wrap_features(labels, "label")
        return super().__new__(
            cls,
            features=features,
            labels=labels,
            receiver_tensors=_wrap_receiver_tensors(receiver_tensors),
        )


def _placeholder_like(value: Any, default_batch_size: int | None) -> tf.Tensor:
    """A placeholder with `value`'s dtype and shape past the batch dimension.

    `value` may be a tensor (also a placeholder made in a throw-away tf.Graph, as legacy
    code did before TF2), a `tf.TensorSpec`, or a numpy array.
    """
    dtype = tf.as_dtype(value.dtype)
    shape = tf.TensorShape(getattr(value, "shape", None))
    if shape.rank is not None and shape.rank > 0:
        shape = tf.TensorShape([default_batch_size]).concatenate(shape[1:])
    name = None
    op = getattr(value, "op", None) if not hasattr(value, "numpy") else None
    if op is not None:
        name = op.name
    elif isinstance(value, tf.TensorSpec):
        name = value.name
    return _V1.placeholder(dtype=dtype, shape=shape, name=name)


def _placeholders_like(features: Any, default_batch_size: int | None) -> dict[str, tf.Tensor]:
    if not isinstance(features, dict):
        raise ValueError(
            f"features must be a dict of string to Tensor (or TensorSpec); given: {features!r}"
        )
    return {name: _placeholder_like(value, default_batch_size) for name, value in features.items()}


def build_parsing_serving_input_receiver_fn(
    feature_spec: dict[str, Any], default_batch_size: int | None = None
) -> Callable[[], ServingInputReceiver]:
    """A receiver fn taking serialized `tf.train.Example`s, parsed with `feature_spec`.

    The signature input is `examples` (a string vector), as in tf.estimator.

    Example:
        >>> spec = {"x": tf.io.FixedLenFeature([4], tf.float32)}
        >>> est.export_saved_model("export", build_parsing_serving_input_receiver_fn(spec))
    """

    def serving_input_receiver_fn() -> ServingInputReceiver:
        serialized = _V1.placeholder(
            dtype=tf.string, shape=[default_batch_size], name="input_example_tensor"
        )
        features = tf.io.parse_example(serialized, feature_spec)
        return ServingInputReceiver(features, {"examples": serialized})

    return serving_input_receiver_fn


def build_raw_serving_input_receiver_fn(
    features: dict[str, Any], default_batch_size: int | None = None
) -> Callable[[], ServingInputReceiver]:
    """A receiver fn that takes the features themselves, one input per feature.

    `features` maps names to tensors, placeholders or `tf.TensorSpec`s that give each
    input's dtype and shape (the batch dimension becomes `default_batch_size`).

    Example:
        >>> fn = build_raw_serving_input_receiver_fn({"x": tf.TensorSpec([None, 4])})
    """

    def serving_input_receiver_fn() -> ServingInputReceiver:
        receiver_tensors = _placeholders_like(features, default_batch_size)
        return ServingInputReceiver(receiver_tensors, receiver_tensors)

    return serving_input_receiver_fn


def build_raw_supervised_input_receiver_fn(
    features: Any, labels: Any, default_batch_size: int | None = None
) -> Callable[[], SupervisedInputReceiver]:
    """A receiver fn taking raw features and labels, as tf.estimator 2.15's
    `tf.estimator.experimental.build_raw_supervised_input_receiver_fn`.

    `features` and `labels` are each a tensor (or `tf.TensorSpec`) or a dict of them; the
    receiver fn makes one placeholder per tensor (batch dimension `default_batch_size`) and
    passes them on in the same structure. Its receiver tensors are the feature and label
    placeholders by key, a single feature tensor keyed `input` and a single label `label`.

    Raises:
        ValueError: features and labels have overlapping keys.

    Example:
        >>> fn = build_raw_supervised_input_receiver_fn(
        ...     {"x": tf.TensorSpec([None, 4])}, tf.TensorSpec([None], tf.int64))
        >>> fn().receiver_tensors.keys()  # {"x", "label"}
    """
    feature_keys = features.keys() if isinstance(features, dict) else [SINGLE_RECEIVER_KEY]
    label_keys = labels.keys() if isinstance(labels, dict) else [SINGLE_LABEL_KEY]
    overlap = set(feature_keys) & set(label_keys)
    if overlap:
        raise ValueError(
            f"Features and labels must have distinct keys. Found overlapping keys: {overlap}"
        )

    def placeholders(value: Any, single_key: str) -> tuple[Any, dict[str, tf.Tensor]]:
        if isinstance(value, dict):
            tensors = _placeholders_like(value, default_batch_size)
            return tensors, tensors
        tensor = _placeholder_like(value, default_batch_size)
        return tensor, {single_key: tensor}

    def supervised_input_receiver_fn() -> SupervisedInputReceiver:
        feature_placeholders, feature_receivers = placeholders(features, SINGLE_RECEIVER_KEY)
        label_placeholders, label_receivers = placeholders(labels, SINGLE_LABEL_KEY)
        return SupervisedInputReceiver(
            feature_placeholders, label_placeholders, {**feature_receivers, **label_receivers}
        )

    return supervised_input_receiver_fn
