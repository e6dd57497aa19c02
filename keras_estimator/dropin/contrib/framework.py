"""`tf.contrib.framework`: global step, variable and checkpoint helpers; `arg_scope` from tf-slim.

`arg_scope`, `add_arg_scope`, `arg_scoped_arguments`, `has_arg_scope` and
`current_arg_scope` need the tf-slim package (the `slim` extra); they then apply to our
`tf.contrib.layers` functions too.
"""

from __future__ import annotations

from typing import Any

import tensorflow as tf

from keras_estimator.dropin.contrib.layers.variables import model_variable as _model_variable
from keras_estimator.dropin.contrib.removed import removed_attribute_getattr
from keras_estimator.dropin.contrib.tf_slim_bridge import load_tf_slim

_V1 = tf.compat.v1
_KEYS = _V1.GraphKeys
_FROM_TF_SLIM = ("arg_scope", "add_arg_scope", "arg_scoped_arguments", "has_arg_scope",
                 "current_arg_scope")  # fmt: skip

get_or_create_global_step = _V1.train.get_or_create_global_step
get_global_step = _V1.train.get_global_step
create_global_step = _V1.train.create_global_step
load_checkpoint = tf.train.load_checkpoint
load_variable = tf.train.load_variable
list_variables = tf.train.list_variables
init_from_checkpoint = _V1.train.init_from_checkpoint
nest = tf.nest


def get_variables(scope: Any = None, suffix: str | None = None,
                  collection: str = _KEYS.GLOBAL_VARIABLES) -> list:  # fmt: skip
    """The variables of `collection` whose names match `scope` (a prefix regex) + `suffix`.

    Example:
        >>> get_variables("bert/encoder")       # every variable under that scope
    """
    if isinstance(scope, _V1.VariableScope):
        scope = scope.name
    if suffix is not None:
        if ":" not in suffix:
            suffix += ":"
        scope = (scope or "") + ".*" + suffix
    return _V1.get_collection(collection, scope)


def get_model_variables(scope: Any = None, suffix: str | None = None) -> list:
    """`get_variables` over `MODEL_VARIABLES` (contrib layers' weights, biases, ...)."""
    return get_variables(scope, suffix, _KEYS.MODEL_VARIABLES)


def get_trainable_variables(scope: Any = None, suffix: str | None = None) -> list:
    """`get_variables` over `TRAINABLE_VARIABLES`."""
    return get_variables(scope, suffix, _KEYS.TRAINABLE_VARIABLES)


def get_local_variables(scope: Any = None, suffix: str | None = None) -> list:
    """`get_variables` over `LOCAL_VARIABLES`."""
    return get_variables(scope, suffix, _KEYS.LOCAL_VARIABLES)


def get_variables_by_name(given_name: str, scope: Any = None) -> list:
    """The variables named `given_name` (last path component), under `scope`."""
    return get_variables(scope=scope, suffix=f"/{given_name}:|^{given_name}:")


def get_unique_variable(var_op_name: str) -> tf.Variable:
    """The one variable whose op name is `var_op_name`; ValueError otherwise."""
    candidates = get_variables(scope=var_op_name)
    if not candidates:
        raise ValueError(
            f"Couldn't find variable {var_op_name}. Fix: pass the full name of an existing "
            f"variable. Received: var_op_name={var_op_name!r}"
        )
    for candidate in candidates:
        if candidate.op.name == var_op_name:
            return candidate
    raise ValueError(
        f"Variable {var_op_name} does not uniquely identify a variable. Fix: pass the full "
        f"name. Received: var_op_name={var_op_name!r}"
    )


def get_variables_to_restore(include: list | None = None, exclude: list | None = None) -> list:
    """Global variables under the `include` scopes (all if None), minus the `exclude` ones.

    Example:
        >>> get_variables_to_restore(exclude=["output_layer"])
    """
    included = get_variables() if include is None else [
        v for scope in include for v in get_variables(scope)
    ]  # fmt: skip
    excluded = {id(v) for scope in exclude or [] for v in get_variables(scope)}
    return [v for v in included if id(v) not in excluded]


def model_variable(name: str, shape: Any = None, dtype: tf.DType = tf.float32,
                   initializer: Any = None, regularizer: Any = None, trainable: bool = True,
                   collections: list | None = None, **_: Any) -> tf.Variable:  # fmt: skip
    """A variable in `GLOBAL_VARIABLES` and `MODEL_VARIABLES` (and `collections`)."""
    return _model_variable(name, shape, dtype, initializer, regularizer, trainable, collections)


def variable(name: str, shape: Any = None, dtype: tf.DType = tf.float32,
             initializer: Any = None, regularizer: Any = None, trainable: bool = True,
             collections: list | None = None, **_: Any) -> tf.Variable:  # fmt: skip
    """`tf.compat.v1.get_variable` in `GLOBAL_VARIABLES` (and `collections`)."""
    every = list(dict.fromkeys([_KEYS.GLOBAL_VARIABLES, *(collections or [])]))
    return _V1.get_variable(name, shape=shape, dtype=dtype, initializer=initializer,
                            regularizer=regularizer, trainable=trainable,
                            collections=every)  # fmt: skip


_removed = removed_attribute_getattr(
    "framework", "tf.compat.v1 equivalents (tf.compat.v1.train.init_from_checkpoint,"
    " tf.nest, tf.compat.v1.get_collection) or tf_slim's framework functions",
)  # fmt: skip


def __getattr__(name: str) -> Any:
    if name in _FROM_TF_SLIM:
        return getattr(load_tf_slim(f"tensorflow.contrib.framework.{name}"), name)
    return _removed(name)


__all__ = [
    "create_global_step",
    "get_global_step",
    "get_local_variables",
    "get_model_variables",
    "get_or_create_global_step",
    "get_trainable_variables",
    "get_unique_variable",
    "get_variables",
    "get_variables_by_name",
    "get_variables_to_restore",
    "init_from_checkpoint",
    "list_variables",
    "load_checkpoint",
    "load_variable",
    "model_variable",
    "nest",
    "variable",
]
