"""The TF1 `tf.layers.Layer` contract on top of `tf.compat.v1.get_variable`.

Keras 3 dropped `tf.compat.v1.layers`; these layers keep TF1's behaviour users rely on:
a variable scope per layer (`dense`, `dense_1`, `my_name/...`), variables made with
`get_variable` (so `reuse`, custom getters, partitioners-free checkpoints and the
engine's name-keyed store all apply), regularizers in REGULARIZATION_LOSSES and batch
norm statistics in UPDATE_OPS.
"""

from __future__ import annotations

import re
from typing import Any

import tensorflow as tf

_V1 = tf.compat.v1


def _snake(name: str) -> str:
    name = re.sub(r"(.)([A-Z][a-z0-9]+)", r"\1_\2", name)
    return re.sub(r"([a-z])([A-Z])", r"\1_\2", name).lower()


def smart_cond(pred: Any, true_fn: Any, false_fn: Any) -> Any:
    """Python-level branch when `pred` is a Python bool, else tf.cond."""
    if isinstance(pred, (bool, int)):
        return true_fn() if pred else false_fn()
    static = tf.get_static_value(pred)
    if static is not None:
        return true_fn() if bool(static) else false_fn()
    return tf.cond(pred, true_fn, false_fn)


class Layer:
    """Base class of keras_estimator's TF1 layers (`tf.compat.v1.layers.Layer`)."""

    _base_name: str | None = None

    def __init__(
        self,
        trainable: bool = True,
        name: str | None = None,
        dtype: Any = None,
        activity_regularizer: Any = None,
        _scope: str | None = None,
        _reuse: Any = None,
        **kwargs: Any,
    ) -> None:
        if kwargs:
            raise TypeError(
                f"{type(self).__name__} got unexpected arguments: {sorted(kwargs)}. Expected "
                "the arguments of tf.compat.v1.layers. Fix: remove them, or check their "
                f"spelling. Received: {', '.join(f'{k}={v!r}' for k, v in sorted(kwargs.items()))}"
            )
        self.trainable = trainable
        self.name = name
        self.dtype = tf.as_dtype(dtype) if dtype is not None else None
        self.activity_regularizer = activity_regularizer
        self.built = False
        self._scope_name = _scope or name
        self._reuse = _reuse
        self._scope: Any = None
        self._weights: list[tf.Variable] = []
        self.losses: list[Any] = []

    # -- Keras-like API -----------------------------------------------------------
    @property
    def scope_name(self) -> str:
        return self._scope.name if self._scope is not None else (self.name or "")

    @property
    def variables(self) -> list[tf.Variable]:
        return list(self._weights)

    weights = variables

    @property
    def trainable_variables(self) -> list[tf.Variable]:
        return [v for v in self._weights if v.trainable] if self.trainable else []

    trainable_weights = trainable_variables

    @property
    def non_trainable_variables(self) -> list[tf.Variable]:
        trainable = {id(v) for v in self.trainable_variables}
        return [v for v in self._weights if id(v) not in trainable]

    def add_weight(
        self,
        name: str,
        shape: Any,
        dtype: Any = None,
        initializer: Any = None,
        regularizer: Any = None,
        trainable: bool = True,
        constraint: Any = None,
    ) -> tf.Variable:
        variable = _V1.get_variable(
            name,
            shape=shape,
            dtype=dtype or self.dtype or tf.float32,
            initializer=initializer,
            regularizer=regularizer,
            trainable=trainable and self.trainable,
            constraint=constraint,
        )
        if all(variable is not w for w in self._weights):
            self._weights.append(variable)
        return variable

    def build(self, input_shape: tf.TensorShape) -> None:
        self.built = True

    def call(self, inputs: Any, *args: Any, **kwargs: Any) -> Any:
        return inputs

    def apply(self, inputs: Any, *args: Any, **kwargs: Any) -> Any:
        return self(inputs, *args, **kwargs)

    def __call__(self, inputs: Any, *args: Any, **kwargs: Any) -> Any:
        base = self._base_name or _snake(type(self).__name__)
        if self._scope is None:
            with _V1.variable_scope(
                self._scope_name, default_name=base, reuse=self._reuse
            ) as scope:
                self._scope = scope
                if self.name is None:
                    self.name = scope.name.split("/")[-1]
                return self._build_and_call(inputs, args, kwargs)
        with _V1.variable_scope(self._scope, reuse=True):
            return self._build_and_call(inputs, args, kwargs)

    def _build_and_call(self, inputs: Any, args: tuple, kwargs: dict) -> Any:
        if not self.built:
            first = tf.nest.flatten(inputs)[0]
            if self.dtype is None and getattr(first, "dtype", None) is not None:
                self.dtype = first.dtype.base_dtype if first.dtype.is_floating else tf.float32
            input_shape = tf.nest.map_structure(lambda t: tf.convert_to_tensor(t).shape, inputs)
            self.build(input_shape)
            self.built = True
        if self.dtype is not None:
            inputs = tf.nest.map_structure(
                lambda t: (
                    tf.cast(t, self.dtype)
                    if tf.convert_to_tensor(t).dtype.is_floating
                    else tf.convert_to_tensor(t)
                ),
                inputs,
            )
        outputs = self.call(inputs, *args, **kwargs)
        if self.activity_regularizer is not None:
            with tf.name_scope("ActivityRegularizer"):
                for out in tf.nest.flatten(outputs):
                    loss = self.activity_regularizer(out)
                    self.losses.append(loss)
                    _V1.add_to_collection(_V1.GraphKeys.REGULARIZATION_LOSSES, loss)
        return outputs


def resolve_activation(fn: Any) -> Any:
    """Resolves TF1 `activation=` arguments (callables, None or Keras names)."""
    if fn is None or callable(fn):
        return fn
    import keras

    return keras.activations.get(fn)


def initializer(init: Any) -> Any:
    """TF1 layers accept initializer objects, classes, callables or Keras names."""
    if init is None or callable(init) and not isinstance(init, str):
        return init
    import keras

    return keras.initializers.get(init)
