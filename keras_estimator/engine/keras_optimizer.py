"""Keras 3 optimizers inside a traced TF1-style step, as tf.keras 2 optimizers behaved there.

In a TF1 graph, tf.keras 2's `apply_gradients` returned an op and `minimize(loss, var_list)`
took a loss tensor; the TF guides' model_fns (and 2.15's canned estimators) were written
for that: `tf.group(optimizer.apply_gradients(zip(grads, variables)), *update_ops)`,
`optimizer.minimize(loss, var_list)`, `optimizer.iterations = get_or_create_global_step()`.
Keras 3's `apply_gradients` returns the iteration variable instead, and has no `minimize`;
inside a model_fn call `keras_optimizers_as_tf1()` gives them the tf.keras 2 surface.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from typing import Any

import keras
import tensorflow as tf

from keras_estimator.seam import internals

# The variable writes an optimizer's apply_gradients adds: weights, slots, iterations.
_WRITE_OPS = ("AssignVariableOp", "AssignAddVariableOp", "AssignSubVariableOp", "ResourceApply",
              "ResourceScatter", "ResourceSparseApply")  # fmt: skip
# The threads inside apply_as_train_op on a graph, in a collection of that graph: there
# Keras' own apply_gradients runs (a subclass's override calling super() comes back to the
# patched method). By thread: MirroredStrategy's replicas trace one graph on threads.
_APPLYING_KEY = "keras_estimator_applying_keras_optimizer"


def apply_as_train_op(optimizer: Any, pairs: list, name: str = "keras_train_op") -> tf.Operation:
    """Runs `optimizer.apply_gradients(pairs)` in the default graph; returns its writes grouped.

    Keras 3 returns its iteration variable, not an op, so the train_op is every write it added.
    """
    graph = tf.compat.v1.get_default_graph()
    first_new_op = len(graph.get_operations())
    applying = graph.get_collection_ref(_APPLYING_KEY)
    applying.append(threading.get_ident())
    try:
        optimizer.apply_gradients(pairs)
    finally:
        applying.remove(threading.get_ident())
    writes = [op for op in graph.get_operations()[first_new_op:] if op.type.startswith(_WRITE_OPS)]
    return tf.group(*writes, name=name)


def _apply_gradients(optimizer: Any, grads_and_vars: Any, original: Callable, *args: Any,
                     **kwargs: Any) -> Any:  # fmt: skip
    if tf.executing_eagerly() or threading.get_ident() in (
        tf.compat.v1.get_default_graph().get_collection(_APPLYING_KEY)
    ):
        return original(optimizer, grads_and_vars, *args, **kwargs)
    pairs = [(g, v) for g, v in grads_and_vars if g is not None]
    if not pairs:
        raise ValueError(
            "optimizer.apply_gradients got no gradient: every one is None. Expected "
            "(gradient, variable) pairs where the loss depends on the variables. Fix: compute "
            "the gradients of the loss with respect to the model's trainable variables. "
            f"Received: grads_and_vars={grads_and_vars!r:.200}"
        )
    return apply_as_train_op(optimizer, pairs, name=kwargs.get("name") or "keras_train_op")


def _minimize(
    optimizer: Any,
    loss: Any,
    var_list: Any = None,
    grad_loss: Any = None,
    name: str | None = None,
    tape: Any = None,
    **tf1_arguments: Any,
) -> tf.Operation:
    """tf.keras 2's `minimize(loss, var_list, grad_loss=None, name=None, tape=None)` in a
    graph: gradients of the loss tensor (or of `loss()`) with respect to `var_list`."""
    if tf1_arguments:
        _refuse_tf1_minimize(optimizer, f"{', '.join(sorted(tf1_arguments))}=")
    if var_list is None:
        raise TypeError(
            "A Keras optimizer's minimize() needs var_list: minimize(loss, var_list). Fix: pass "
            "the trainable variables, e.g. tf.compat.v1.trainable_variables(), or return the "
            "optimizer as the EstimatorSpec's train_op (keras_estimator minimises the loss). "
            "Received: var_list=None"
        )
    if callable(var_list):
        var_list = var_list()
    var_list = list(tf.nest.flatten(var_list))
    if any(_is_global_step(v) for v in var_list):
        _refuse_tf1_minimize(optimizer, "the global step as second argument")
    if callable(loss):
        loss = loss()
    grads = tf.gradients(loss, [internals.keras_variable_backing(v) for v in var_list],
                         grad_ys=grad_loss)  # fmt: skip
    pairs = [(g, v) for g, v in zip(grads, var_list) if g is not None]
    if not pairs:
        raise ValueError(
            "optimizer.minimize found no variable in var_list that the loss depends on. "
            "Expected var_list to hold the trainable variables the loss is computed from. "
            "Fix: pass model.trainable_variables (after calling the model). "
            f"Received: {len(var_list)} variables, loss={getattr(loss, 'name', loss)!r}"
        )
    return apply_as_train_op(optimizer, pairs, name=name or "keras_train_op")


def _get_gradients(optimizer: Any, loss: Any, params: Any) -> list:
    """tf.keras 2's `get_gradients(loss, params)` in a graph: the gradient of the loss
    tensor for each of `params`, every one required. (Clipping happens once, in Keras 3's
    apply_gradients.)"""
    params = list(tf.nest.flatten(params))
    grads = tf.gradients(loss, [internals.keras_variable_backing(p) for p in params])
    missing = [getattr(p, "path", None) or p.name for g, p in zip(grads, params) if g is None]
    if missing:
        raise ValueError(
            f"optimizer.get_gradients: the loss has no gradient for {len(missing)} of the "
            f"{len(params)} variables given (first: {missing[0]!r}). Expected every variable "
            "in params to take part in computing the loss, as tf.keras 2 required. Fix: pass "
            "only the variables the loss depends on (e.g. the model's trainable_variables "
            f"after calling it). Received: loss={getattr(loss, 'name', loss)!r}"
        )
    return grads


def _get_updates(optimizer: Any, loss: Any, params: Any) -> list:
    """tf.keras 2's `get_updates(loss, params)` in a graph: `[train_op]`, the op applying
    the loss's gradients to `params` (TensorFlow's TF 2.0 migration guide's custom model_fn
    and TF-Ranking's keras estimator take `[0]`)."""
    params = list(tf.nest.flatten(params))
    grads = _get_gradients(optimizer, loss, params)
    return [apply_as_train_op(optimizer, list(zip(grads, params)))]


def _is_global_step(value: Any) -> bool:
    name = getattr(value, "name", "") or ""
    dtype = getattr(value, "dtype", None)
    return name.split(":")[0].rsplit("/", 1)[-1].startswith("global_step") and (
        dtype is not None and tf.as_dtype(dtype).is_integer
    )


# Keras optimizer -> the TF1 optimizer of the same method, for error messages.
TF1_OPTIMIZERS = {"SGD": "GradientDescentOptimizer", "RMSprop": "RMSPropOptimizer",
                  "Adam": "AdamOptimizer", "Adagrad": "AdagradOptimizer",
                  "Adadelta": "AdadeltaOptimizer", "Ftrl": "FtrlOptimizer"}  # fmt: skip


def _refuse_tf1_minimize(optimizer: Any, given: str) -> None:
    kind = type(optimizer).__name__
    tf1 = TF1_OPTIMIZERS.get(kind, "AdamOptimizer")
    raise TypeError(
        f"A Keras optimizer's minimize() was called the TF1 way (with {given}). Keras "
        f"optimizers (keras.optimizers.{kind}) take minimize(loss, var_list) and count "
        "their own steps; `minimize(loss, global_step=...)` is the TF1 optimizers' API. "
        f"Fix: use a TF1 optimizer, tf.compat.v1.train.{tf1}(...).minimize(loss, "
        "global_step=tf.compat.v1.train.get_global_step()), or keep the Keras optimizer "
        "and return it as the EstimatorSpec's train_op (keras_estimator minimises the loss "
        "over the trainable variables and counts the global step). "
        f"Received: optimizer={kind}, {given}"
    )


def keras_optimizers_as_tf1() -> contextlib.AbstractContextManager:
    """Inside (one model_fn call), Keras 3 optimizers behave as tf.keras 2's in a TF1 graph:
    `apply_gradients` returns a train op, `minimize(loss, var_list)`,
    `get_updates(loss, params)` and `get_gradients(loss, params)` exist, `get_config()`
    works (`clone_model` of a compiled model calls it), and `optimizer.iterations` may be
    set (to the global step: then it counts the steps)."""
    return internals.keras_optimizers_as_in_tf1_graph(
        _apply_gradients, _minimize, _get_updates, _get_gradients
    )


class GlobalStepOptimizer(keras.optimizers.SGD):
    """`model.optimizer` of an EstimatorModel compiled without one: the model_fn's train_op
    trains, so this optimizer applies nothing (plain SGD keeps no slot variables); its
    `iterations` is the global step, which Keras callbacks read from it in `fit()`
    (TensorBoard's step, steps per second). Its learning rate is 0: the model_fn's own
    optimizer holds the real one."""

    def __init__(self, global_step: tf.Variable) -> None:
        super().__init__(learning_rate=0.0, name="global_step_optimizer")
        self._ke_global_step = global_step

    @property
    def iterations(self) -> tf.Variable:
        return self._ke_global_step
