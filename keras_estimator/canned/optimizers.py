"""The canned estimators' optimizers, with tf.estimator 2.15's checkpoint layout.

tf.estimator 2.15's canned estimators trained with `tf.keras.optimizers.legacy` classes,
whose state is in checkpoints as `training/<Name>/<hyperparameter>` scalars and
`training/<Name>/<variable>/<slot>` slots, with the global step as their iteration count.
Keras 3 has no legacy optimizers, so these small ones apply the same updates (TensorFlow's
fused `ResourceApply*` kernels) to variables named the same way: checkpoints move both
ways between tf.estimator 2.15 and keras_estimator.

`resolve_optimizer` turns what a canned estimator was given (a name, a Keras optimizer, a
`tf.compat.v1.train.Optimizer`, or a callable returning one) into something that trains.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Callable
from typing import Any

import keras
import tensorflow as tf

from keras_estimator.engine.keras_optimizer import apply_as_train_op
from keras_estimator.seam.internals import keras_optimizer_learning_rate

_V1 = tf.compat.v1
logger = logging.getLogger("keras_estimator")


class LegacyOptimizer:
    """An optimizer whose variables are named as tf.keras' legacy optimizers named them.

    Subclasses name their hyperparameters (`HYPER`, saved as variables), their slots
    (`SLOTS`, name -> initial value) and implement `_apply_dense(grad, var, slots, hyper,
    step)`.
    """

    NAME = ""
    HYPER: tuple[str, ...] = ()
    SLOTS: dict[str, str] = {}

    def __init__(
        self, learning_rate: float | Callable | tf.Tensor = 0.001, name: str | None = None, **hyper
    ):
        self.name = name or self.NAME
        self.learning_rate = learning_rate
        self.decay = float(hyper.pop("decay", 0.0))
        # Gradient clipping, as the legacy Keras optimizers took it.
        self.clipnorm = hyper.pop("clipnorm", None)
        self.clipvalue = hyper.pop("clipvalue", None)
        self.global_clipnorm = hyper.pop("global_clipnorm", None)
        self.hyper = hyper
        self.own_iterations = False  # True: an `iter` variable instead of the global step

    def __repr__(self) -> str:
        return f"{type(self).__name__}(learning_rate={self.learning_rate!r}, name={self.name!r})"

    # -- in the model_fn -------------------------------------------------------------
    def minimize(
        self,
        loss: tf.Tensor,
        global_step: tf.Variable | None = None,
        var_list: list | None = None,
    ) -> tf.Operation:
        """Gradients of `loss` applied to `var_list` (default: the trainable variables)."""
        variables = var_list if var_list is not None else _V1.trainable_variables()
        grads = tf.gradients(loss, variables)
        pairs = [(g, v) for g, v in zip(grads, variables) if g is not None]
        if not pairs:
            raise ValueError(
                f"{self.name}: no trainable variable receives a gradient from the loss. "
                "Expected the logits to depend on the model's variables."
            )
        return self.apply_gradients(pairs, global_step)

    def apply_gradients(self, pairs: list, global_step: tf.Variable | None) -> tf.Operation:
        if _replicas() > 1:
            # Every replica applies the summed gradients to its own copy of each variable
            # (and slot), so the copies stay equal; tf.estimator summed them the same way.
            # (Reduced in a merge_call, as v1 optimizers do: a replica-context all_reduce
            # uses collective ops whose instance keys clash across MirroredStrategy objects
            # in one process.)
            def sum_over_replicas(strategy: Any, pairs: list) -> list:
                return strategy.extended.batch_reduce_to(tf.distribute.ReduceOp.SUM, pairs)

            context = tf.distribute.get_replica_context()
            grads = context.merge_call(sum_over_replicas, args=(pairs,))
            pairs = list(zip(grads, [v for _, v in pairs]))
        pairs = self._clipped(pairs)
        with _V1.variable_scope("training", reuse=_V1.AUTO_REUSE):
            with _V1.variable_scope(self.name, reuse=_V1.AUTO_REUSE):
                hyper = {
                    key: self._scalar(key, value) for key, value in self._hyper_values().items()
                }
                iterations = self._iterations(global_step)
                step = tf.cast(iterations, tf.float32)
                lr = self._learning_rate_at(hyper.get("learning_rate"), iterations, step)
                if self.decay:
                    lr = lr / (1.0 + hyper["decay"] * step)
                hyper["lr_t"] = lr
                updates = []
                for grad, var in pairs:
                    slots = {
                        slot: self._slot(var, slot, init) for slot, init in self.SLOTS.items()
                        if self._uses_slot(slot)
                    }  # fmt: skip
                    if isinstance(grad, tf.IndexedSlices):
                        update = self._apply_sparse(*_deduplicated(grad), var, slots, hyper, step)
                    else:
                        update = self._apply_dense(grad, var, slots, hyper, step)
                    updates.append(update)
                if self.own_iterations:
                    with tf.control_dependencies(updates):
                        updates = [iterations.assign_add(1, read_value=False)]
                return tf.group(*updates, name=f"{self.name}_update")

    def _hyper_values(self) -> dict[str, float]:
        values = {"decay": self.decay}
        learning_rate = self.learning_rate
        # A schedule, or a tensor the model_fn computed (a TF1 `exponential_decay` of the
        # global step), is not a variable, as in 2.15: only a number is.
        if not (callable(learning_rate) or tf.is_tensor(learning_rate)):
            values["learning_rate"] = float(learning_rate)
        values.update({key: float(self.hyper[key]) for key in self.HYPER})
        return values

    def _learning_rate_at(self, variable: Any, iterations: Any, step: tf.Tensor) -> Any:
        lr = self.learning_rate
        if tf.is_tensor(lr):
            return tf.cast(lr, tf.float32)
        if callable(lr):  # a Keras LearningRateSchedule, evaluated at the iteration
            return tf.cast(lr(iterations), tf.float32)
        return variable

    def _clipped(self, pairs: list) -> list:
        grads = [g for g, _ in pairs]
        if self.clipvalue is not None:
            low, high = -self.clipvalue, self.clipvalue
            grads = [_map_values(g, lambda t: tf.clip_by_value(t, low, high)) for g in grads]
        if self.clipnorm is not None:
            norm = self.clipnorm
            grads = [_map_values(g, lambda t: tf.clip_by_norm(t, norm)) for g in grads]
        if self.global_clipnorm is not None:
            grads, _ = tf.clip_by_global_norm(grads, self.global_clipnorm)
        return list(zip(grads, [v for _, v in pairs]))

    def _iterations(self, global_step: tf.Variable | None) -> Any:
        if self.own_iterations or global_step is None:
            self.own_iterations = True
            return _V1.get_variable(
                "iter", shape=[], dtype=tf.int64, initializer=_V1.zeros_initializer(),
                trainable=False,
            )  # fmt: skip
        return global_step

    def _scalar(self, key: str, value: float) -> tf.Variable:
        return _V1.get_variable(
            key, shape=[], dtype=tf.float32, initializer=_V1.constant_initializer(value),
            trainable=False,
        )  # fmt: skip

    def _slot(self, var: tf.Variable, slot: str, init: str) -> tf.Variable:
        value = float(self.hyper.get(init, 0.0)) if init else 0.0
        return _V1.get_variable(
            f"{var.name.split(':')[0]}/{slot}",
            shape=var.shape,
            dtype=var.dtype.base_dtype,
            initializer=_V1.constant_initializer(value),
            trainable=False,
        )

    def _uses_slot(self, slot: str) -> bool:
        return True

    def _apply_dense(self, grad, var, slots, hyper, step) -> tf.Operation:
        raise NotImplementedError

    def _apply_sparse(self, values, indices, var, slots, hyper, step) -> tf.Operation:
        """Rows `indices` get `values`; by default as a dense gradient (zeros elsewhere),
        which is what the legacy Keras Adam / RMSprop without momentum did as well."""
        dense = tf.scatter_nd(indices[:, None], values, tf.shape(var, out_type=indices.dtype))
        return self._apply_dense(dense, var, slots, hyper, step)


class Adagrad(LegacyOptimizer):
    """`accum += g^2; var -= lr * g / (sqrt(accum) + epsilon)`, accumulators start at 0.1."""

    NAME = "Adagrad"
    SLOTS = {"accumulator": "initial_accumulator_value"}

    def __init__(self, learning_rate=0.001, initial_accumulator_value=0.1, epsilon=1e-7,
                 name=None, **kwargs):  # fmt: skip
        super().__init__(learning_rate, name, initial_accumulator_value=initial_accumulator_value,
                         epsilon=epsilon, **kwargs)  # fmt: skip

    def _apply_dense(self, grad, var, slots, hyper, step):
        return tf.raw_ops.ResourceApplyAdagradV2(
            var=var.handle, accum=slots["accumulator"].handle, lr=hyper["lr_t"],
            epsilon=tf.constant(self.hyper["epsilon"], var.dtype), grad=grad,
        )  # fmt: skip

    def _apply_sparse(self, values, indices, var, slots, hyper, step):
        return tf.raw_ops.ResourceSparseApplyAdagradV2(
            var=var.handle, accum=slots["accumulator"].handle, lr=hyper["lr_t"],
            epsilon=tf.constant(self.hyper["epsilon"], var.dtype), grad=values, indices=indices,
        )  # fmt: skip


class Adam(LegacyOptimizer):
    NAME = "Adam"
    HYPER = ("beta_1", "beta_2")
    SLOTS = {"m": "", "v": ""}

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, name=None,
                 **kwargs):  # fmt: skip
        super().__init__(learning_rate, name, beta_1=beta_1, beta_2=beta_2, epsilon=epsilon,
                         **kwargs)  # fmt: skip

    def _apply_dense(self, grad, var, slots, hyper, step):
        local_step = step + 1.0
        return tf.raw_ops.ResourceApplyAdam(
            var=var.handle, m=slots["m"].handle, v=slots["v"].handle,
            beta1_power=tf.pow(hyper["beta_1"], local_step),
            beta2_power=tf.pow(hyper["beta_2"], local_step),
            lr=hyper["lr_t"], beta1=hyper["beta_1"], beta2=hyper["beta_2"],
            epsilon=tf.constant(self.hyper["epsilon"], var.dtype), grad=grad,
        )  # fmt: skip


class Ftrl(LegacyOptimizer):
    NAME = "Ftrl"
    HYPER = ("beta", "l1_regularization_strength", "l2_regularization_strength",
             "learning_rate_power")  # fmt: skip
    SLOTS = {"accumulator": "initial_accumulator_value", "linear": ""}

    def __init__(self, learning_rate=0.001, learning_rate_power=-0.5,
                 initial_accumulator_value=0.1, l1_regularization_strength=0.0,
                 l2_regularization_strength=0.0, name=None,
                 l2_shrinkage_regularization_strength=0.0, beta=0.0, **kwargs):  # fmt: skip
        super().__init__(
            learning_rate, name, learning_rate_power=learning_rate_power,
            initial_accumulator_value=initial_accumulator_value,
            l1_regularization_strength=l1_regularization_strength,
            l2_regularization_strength=l2_regularization_strength,
            l2_shrinkage_regularization_strength=l2_shrinkage_regularization_strength,
            beta=beta, **kwargs,
        )  # fmt: skip

    def _args(self, grad, var, slots, hyper) -> dict:
        lr = hyper["lr_t"]
        # beta joins l2 as beta / (2 lr), as the legacy Keras Ftrl did.
        l2 = hyper["l2_regularization_strength"] + hyper["beta"] / (2.0 * lr)
        return dict(
            var=var.handle, accum=slots["accumulator"].handle, linear=slots["linear"].handle,
            grad=grad, lr=lr, l1=hyper["l1_regularization_strength"], l2=l2,
            lr_power=hyper["learning_rate_power"],
        )  # fmt: skip

    def _apply_dense(self, grad, var, slots, hyper, step):
        args = self._args(grad, var, slots, hyper)
        shrinkage = self.hyper["l2_shrinkage_regularization_strength"]
        if shrinkage:
            return tf.raw_ops.ResourceApplyFtrlV2(
                l2_shrinkage=tf.constant(shrinkage, var.dtype), **args
            )
        return tf.raw_ops.ResourceApplyFtrl(**args)

    def _apply_sparse(self, values, indices, var, slots, hyper, step):
        # Only the rows in the batch move: a zero gradient would still move the others.
        args = dict(self._args(values, var, slots, hyper), indices=indices)
        shrinkage = self.hyper["l2_shrinkage_regularization_strength"]
        if shrinkage:
            return tf.raw_ops.ResourceSparseApplyFtrlV2(
                l2_shrinkage=tf.constant(shrinkage, var.dtype), **args
            )
        return tf.raw_ops.ResourceSparseApplyFtrl(**args)


class RMSprop(LegacyOptimizer):
    NAME = "RMSprop"
    HYPER = ("momentum", "rho")
    SLOTS = {"rms": "", "momentum": "", "mg": ""}

    def __init__(self, learning_rate=0.001, rho=0.9, momentum=0.0, epsilon=1e-7, centered=False,
                 name=None, **kwargs):  # fmt: skip
        super().__init__(learning_rate, name, rho=rho, momentum=momentum, epsilon=epsilon,
                         centered=centered, **kwargs)  # fmt: skip

    def _uses_slot(self, slot: str) -> bool:
        if slot == "momentum":
            return self.hyper["momentum"] > 0
        if slot == "mg":
            return bool(self.hyper["centered"])
        return True

    def _apply_dense(self, grad, var, slots, hyper, step):
        epsilon = tf.constant(self.hyper["epsilon"], var.dtype)
        rho = hyper["rho"]
        if "momentum" in slots:
            common = dict(
                var=var.handle, ms=slots["rms"].handle, mom=slots["momentum"].handle,
                lr=hyper["lr_t"], rho=rho, momentum=hyper["momentum"], epsilon=epsilon,
                grad=grad,
            )  # fmt: skip
            if "mg" in slots:
                return tf.raw_ops.ResourceApplyCenteredRMSProp(mg=slots["mg"].handle, **common)
            return tf.raw_ops.ResourceApplyRMSProp(**common)
        rms = slots["rms"]
        rms_t = rho * rms + (1.0 - rho) * tf.square(grad)
        denominator = rms_t
        if "mg" in slots:
            mg_t = rho * slots["mg"] + (1.0 - rho) * grad
            denominator = rms_t - tf.square(mg_t)
            slots["mg"].assign(mg_t, read_value=False)
        with tf.control_dependencies([rms.assign(rms_t, read_value=False)]):
            return var.assign_sub(
                hyper["lr_t"] * grad / (tf.sqrt(denominator) + epsilon), read_value=False
            )

    def _apply_sparse(self, values, indices, var, slots, hyper, step):
        if "momentum" not in slots:  # the legacy RMSprop decayed every row here as well
            return super()._apply_sparse(values, indices, var, slots, hyper, step)
        common = dict(
            var=var.handle, ms=slots["rms"].handle, mom=slots["momentum"].handle,
            lr=hyper["lr_t"], rho=hyper["rho"], momentum=hyper["momentum"],
            epsilon=tf.constant(self.hyper["epsilon"], var.dtype), grad=values, indices=indices,
        )  # fmt: skip
        if "mg" in slots:
            return tf.raw_ops.ResourceSparseApplyCenteredRMSProp(mg=slots["mg"].handle, **common)
        return tf.raw_ops.ResourceSparseApplyRMSProp(**common)


class SGD(LegacyOptimizer):
    NAME = "SGD"
    HYPER = ("momentum",)
    SLOTS = {"momentum": ""}

    def __init__(self, learning_rate=0.01, momentum=0.0, nesterov=False, name=None, **kwargs):
        super().__init__(learning_rate, name, momentum=momentum, nesterov=nesterov, **kwargs)

    def _uses_slot(self, slot: str) -> bool:
        return self.hyper["momentum"] > 0

    def _apply_dense(self, grad, var, slots, hyper, step):
        if "momentum" in slots:
            return tf.raw_ops.ResourceApplyKerasMomentum(
                var=var.handle, accum=slots["momentum"].handle, lr=hyper["lr_t"], grad=grad,
                momentum=hyper["momentum"], use_nesterov=bool(self.hyper["nesterov"]),
            )  # fmt: skip
        return tf.raw_ops.ResourceApplyGradientDescent(
            var=var.handle, alpha=hyper["lr_t"], delta=grad
        )

    def _apply_sparse(self, values, indices, var, slots, hyper, step):
        if "momentum" in slots:
            return tf.raw_ops.ResourceSparseApplyKerasMomentum(
                var=var.handle, accum=slots["momentum"].handle, lr=hyper["lr_t"], grad=values,
                indices=indices, momentum=hyper["momentum"],
                use_nesterov=bool(self.hyper["nesterov"]),
            )  # fmt: skip
        return tf.raw_ops.ResourceScatterAdd(
            resource=var.handle, indices=indices, updates=-hyper["lr_t"] * values
        )


def _deduplicated(grad: tf.IndexedSlices) -> tuple[tf.Tensor, tf.Tensor]:
    """(values, indices) with repeated indices summed, as the legacy optimizers did."""
    unique, positions = tf.unique(grad.indices)
    values = tf.math.unsorted_segment_sum(grad.values, positions, tf.shape(unique)[0])
    return values, unique


def _map_values(grad: Any, fn: Callable) -> Any:
    if isinstance(grad, tf.IndexedSlices):
        return tf.IndexedSlices(fn(grad.values), grad.indices, grad.dense_shape)
    return fn(grad)


# tf.estimator's names for optimizers given as strings.
OPTIMIZER_NAMES: dict[str, type[LegacyOptimizer]] = {
    "Adagrad": Adagrad,
    "Adam": Adam,
    "Ftrl": Ftrl,
    "RMSProp": RMSprop,
    "SGD": SGD,
}
# Keras 3 optimizers carried over with their settings (keys: Keras class names).
_FROM_KERAS = {"Adagrad": Adagrad, "Adam": Adam, "Ftrl": Ftrl, "RMSprop": RMSprop, "SGD": SGD}
# Keras 3's automatic names ("adam", "adam_1", ...): tf.estimator's variables used the class
# name ("training/Adam/..."), whatever else was created before.
_KERAS_AUTO_NAME = re.compile(r"(adagrad|adam|ftrl|rm_sprop|rmsprop|sgd)(_\d+)?")
# Settings the legacy-named optimizers do not implement: such an optimizer runs as Keras'.
_KERAS_ONLY = ("weight_decay", "use_ema", "gradient_accumulation_steps", "loss_scale_factor")


def check_optimizer_name(optimizer: Any) -> None:
    """tf.estimator's error for an unknown optimizer string (raised when constructed)."""
    if isinstance(optimizer, str) and optimizer not in OPTIMIZER_NAMES:
        raise ValueError(
            f"Unsupported optimizer name: {optimizer}. Supported names are: "
            f"{tuple(OPTIMIZER_NAMES)}"
        )


def _from_keras(optimizer: keras.optimizers.Optimizer) -> LegacyOptimizer | None:
    cls = _FROM_KERAS.get(type(optimizer).__name__)
    if cls is None or type(optimizer).__module__.split(".")[0] != "keras":
        return None
    with tf.init_scope():  # made inside a model_fn, its settings still read eagerly
        config = optimizer.get_config()
    lr = keras_optimizer_learning_rate(optimizer)  # a variable or a schedule
    if not isinstance(lr, keras.optimizers.schedules.LearningRateSchedule):
        lr = float(config["learning_rate"])
    kept_as_keras = [k for k in _KERAS_ONLY if config.get(k)]
    if kept_as_keras:
        logger.info(
            "%s uses %s, which only Keras' own optimizer implements: it trains as given, and "
            "its checkpoint variables get Keras names instead of tf.estimator's.",
            type(optimizer).__name__, kept_as_keras,
        )  # fmt: skip
        return None
    name = config.get("name")
    kwargs: dict[str, Any] = {
        k: config[k] for k in ("clipnorm", "clipvalue", "global_clipnorm") if config.get(k)
    }
    if cls is Adagrad:
        kwargs |= {k: config[k] for k in ("initial_accumulator_value", "epsilon")}
    elif cls is Adam:
        if config.get("amsgrad"):
            return None
        kwargs |= {k: config[k] for k in ("beta_1", "beta_2", "epsilon")}
    elif cls is Ftrl:
        kwargs |= {
            k: config[k]
            for k in (
                "learning_rate_power",
                "initial_accumulator_value",
                "l1_regularization_strength",
                "l2_regularization_strength",
                "l2_shrinkage_regularization_strength",
                "beta",
            )
        }
    elif cls is RMSprop:
        kwargs |= {k: config[k] for k in ("rho", "momentum", "epsilon", "centered")}
    elif cls is SGD:
        kwargs |= {k: config[k] for k in ("momentum", "nesterov")}
    # Keras 3's default names are lower case; tf.estimator's variables used the class name.
    auto = name is None or _KERAS_AUTO_NAME.fullmatch(name) is not None
    return cls(lr, name=None if auto else name, **kwargs)


def resolve_optimizer(optimizer: Any, learning_rate: float | None) -> Any:
    """What a canned estimator trains with, for what the user gave it.

    Args:
        optimizer: A name in `OPTIMIZER_NAMES`, a Keras 3 optimizer, a
            `tf.compat.v1.train.Optimizer`, a `LegacyOptimizer`, or a callable returning one.
        learning_rate: The estimator's learning rate for a name (None: the class default).

    Returns:
        A `LegacyOptimizer` (Keras' Adagrad/Adam/Ftrl/RMSprop/SGD become one, keeping their
        settings), a v1 optimizer, or another Keras optimizer (applied as Keras applies it).
    """
    if isinstance(optimizer, str):
        check_optimizer_name(optimizer)
        cls = OPTIMIZER_NAMES[optimizer]
        return cls(learning_rate) if learning_rate is not None else cls()
    if callable(optimizer) and not isinstance(
        optimizer, (keras.optimizers.Optimizer, _V1.train.Optimizer, LegacyOptimizer)
    ):
        optimizer = optimizer()
    if isinstance(optimizer, LegacyOptimizer | _V1.train.Optimizer):
        return optimizer
    if isinstance(optimizer, keras.optimizers.Optimizer):
        return _from_keras(optimizer) or optimizer
    raise ValueError(
        "The given object is not a tf.keras.optimizers.Optimizer instance. Given: "
        f"{optimizer!r}. Expected one of {tuple(OPTIMIZER_NAMES)}, a keras.optimizers."
        "Optimizer, a tf.compat.v1.train.Optimizer, or a callable returning one."
    )


def linear_learning_rate(num_columns: int, cap: float = 0.2) -> float:
    """tf.estimator's default linear learning rate: min(cap, 1 / sqrt(number of columns))."""
    return min(cap, 1.0 / math.sqrt(max(num_columns, 1)))


def _replicas() -> int:
    """Replicas training in sync when called in a strategy's replica context, else 1."""
    if not tf.distribute.has_strategy() or tf.distribute.in_cross_replica_context():
        return 1
    return tf.distribute.get_replica_context().num_replicas_in_sync


def minimize(optimizer: Any, loss: tf.Tensor, var_list: list, mean_loss: bool = True) -> Any:
    """Applies a resolved optimizer to `var_list`; returns the train_op part it makes.

    Under a strategy, replicas' gradients are summed, so a per-replica mean loss
    (`mean_loss`, SUM_OVER_BATCH_SIZE) is divided by the number of replicas first, as
    tf.estimator's heads did. v1 optimizers scale it themselves (the engine asks them to).
    """
    global_step = _V1.train.get_global_step()
    if isinstance(optimizer, _V1.train.Optimizer):
        return optimizer.minimize(loss, var_list=var_list)
    replicas = _replicas()
    if mean_loss and replicas > 1:
        loss = loss / float(replicas)
    if isinstance(optimizer, LegacyOptimizer):
        return optimizer.minimize(loss, global_step, var_list)
    grads = tf.gradients(loss, var_list)
    return apply_as_train_op(optimizer, [(g, v) for g, v in zip(grads, var_list) if g is not None])
