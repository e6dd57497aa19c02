"""`tf.contrib.layers.optimize_loss`: a train_op from a loss, with contrib's options.

The optimizer is a name of `OPTIMIZER_CLS_NAMES`, a `tf.compat.v1.train.Optimizer` class
or instance, or a function of the learning rate returning one. The learning rate becomes
the variable `OptimizeLoss/learning_rate` (a float) as in TF1.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Sequence
from typing import Any

import tensorflow as tf

_V1 = tf.compat.v1

# Each makes the optimizer from `learning_rate=` (a class, or Momentum's function of it).
OPTIMIZER_CLS_NAMES: dict[str, Callable[..., Any]] = {
    "Adagrad": _V1.train.AdagradOptimizer,
    "Adam": _V1.train.AdamOptimizer,
    "Ftrl": _V1.train.FtrlOptimizer,
    "Momentum": lambda learning_rate: _V1.train.MomentumOptimizer(learning_rate, momentum=0.9),
    "RMSProp": _V1.train.RMSPropOptimizer,
    "SGD": _V1.train.GradientDescentOptimizer,
}

OPTIMIZER_SUMMARIES = ["learning_rate", "loss", "gradients", "gradient_norm",
                       "global_gradient_norm"]  # fmt: skip


def _make_optimizer(optimizer: Any, lr: Any) -> Any:
    if isinstance(optimizer, str):
        if optimizer not in OPTIMIZER_CLS_NAMES:
            raise ValueError(
                f"Unknown optimizer name. Expected one of {sorted(OPTIMIZER_CLS_NAMES)}, a "
                "tf.compat.v1.train.Optimizer class or instance, or a function of the "
                f"learning rate. Received: optimizer={optimizer!r}"
            )
        return OPTIMIZER_CLS_NAMES[optimizer](learning_rate=lr)
    if isinstance(optimizer, type) and issubclass(optimizer, _V1.train.Optimizer):
        return optimizer(learning_rate=lr)
    if isinstance(optimizer, _V1.train.Optimizer):
        return optimizer
    if callable(optimizer):
        made = optimizer(lr) if lr is not None else optimizer()
        if not isinstance(made, _V1.train.Optimizer):
            raise ValueError(
                "The optimizer function must return a tf.compat.v1.train.Optimizer. Fix: "
                f"return one. Received: {type(made).__name__}"
            )
        return made
    raise ValueError(
        "optimizer must be a name, a tf.compat.v1.train.Optimizer class or instance, or a "
        f"function of the learning rate. Received: optimizer={optimizer!r}"
    )


def optimize_loss(
    loss: tf.Tensor,
    global_step: Any,
    learning_rate: Any,
    optimizer: Any,
    gradient_noise_scale: float | None = None,
    gradient_multipliers: dict | None = None,
    clip_gradients: Any = None,
    learning_rate_decay_fn: Callable | None = None,
    update_ops: Sequence | None = None,
    variables: Sequence | None = None,
    name: str | None = None,
    summaries: Sequence[str] | None = None,
    colocate_gradients_with_ops: bool = False,
    increment_global_step: bool = True,
) -> tf.Tensor:
    """Computes and applies the gradients of `loss`; returns the loss after the update.

    Example:
        >>> train_op = optimize_loss(loss, tf.compat.v1.train.get_global_step(),
        ...                          learning_rate=0.01, optimizer="Adam")
    """
    del colocate_gradients_with_ops
    if gradient_noise_scale is not None:
        raise NotImplementedError(
            "optimize_loss(gradient_noise_scale=...) is not supported by keras_estimator. "
            f"Fix: leave it None. Received: gradient_noise_scale={gradient_noise_scale!r}"
        )
    if global_step is None:
        global_step = _V1.train.get_or_create_global_step()
    summaries = OPTIMIZER_SUMMARIES if summaries is None else list(summaries)
    with _V1.variable_scope(name, "OptimizeLoss", [loss, global_step]):
        if update_ops is None:
            update_ops = _V1.get_collection(_V1.GraphKeys.UPDATE_OPS)
        if update_ops:
            with tf.control_dependencies(list(update_ops)):
                loss = tf.identity(loss)
        lr = None
        if learning_rate is not None:
            if isinstance(learning_rate, (tf.Tensor, tf.Variable)) and (
                learning_rate.shape.rank == 0
            ):
                lr = learning_rate
            elif isinstance(learning_rate, numbers.Real):
                lr = _V1.get_variable(
                    "learning_rate",
                    [],
                    trainable=False,
                    initializer=_V1.constant_initializer(learning_rate),
                )
            else:
                raise ValueError(
                    "learning_rate must be a float or a scalar tensor. Fix: pass one. "
                    f"Received: learning_rate={learning_rate!r}"
                )
        if learning_rate_decay_fn is not None:
            if lr is None:
                raise ValueError(
                    "learning_rate_decay_fn needs a learning_rate. Fix: pass learning_rate. "
                    "Received: learning_rate=None"
                )
            lr = learning_rate_decay_fn(lr, global_step)
        if lr is not None and "learning_rate" in summaries:
            _V1.summary.scalar("learning_rate", lr)
        opt = _make_optimizer(optimizer, lr)
        if variables is None:
            variables = _V1.trainable_variables()
        gradients = opt.compute_gradients(loss, list(variables))
        if gradient_multipliers:
            gradients = _multiply(gradients, gradient_multipliers)
        if "global_gradient_norm" in summaries or "gradient_norm" in summaries:
            _V1.summary.scalar(
                "global_norm/gradient_norm",
                tf.linalg.global_norm([g for g, _ in gradients if g is not None]),
            )
        if isinstance(clip_gradients, numbers.Real):
            grads, variables_ = zip(*gradients)
            clipped, _ = tf.clip_by_global_norm(list(grads), clip_gradients)
            gradients = list(zip(clipped, variables_))
        elif callable(clip_gradients):
            gradients = clip_gradients(gradients)
        elif clip_gradients is not None:
            raise ValueError(
                "clip_gradients must be a float or a function. Fix: pass one. "
                f"Received: clip_gradients={clip_gradients!r}"
            )
        if "loss" in summaries:
            _V1.summary.scalar("loss", loss)
        for gradient, variable in gradients:
            if gradient is None:
                continue
            label = variable.name.replace(":", "_")
            if "gradients" in summaries:
                _V1.summary.histogram(f"gradients/{label}", gradient)
            if "gradient_norm" in summaries:
                _V1.summary.scalar(f"gradient_norm/{label}", tf.linalg.global_norm([gradient]))
        step = global_step if increment_global_step else None
        grad_updates = opt.apply_gradients(gradients, global_step=step, name="train")
        with tf.control_dependencies([grad_updates]):
            return tf.identity(loss)


def _multiply(gradients: list, multipliers: dict) -> list:
    result = []
    for gradient, variable in gradients:
        key = variable if variable in multipliers else variable.op.name
        if gradient is not None and key in multipliers:
            gradient = gradient * tf.cast(multipliers[key], gradient.dtype)
        result.append((gradient, variable))
    return result


__all__ = ["OPTIMIZER_CLS_NAMES", "OPTIMIZER_SUMMARIES", "optimize_loss"]
