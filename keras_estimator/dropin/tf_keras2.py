"""What tf.keras 2 code used that Keras 3 renamed or moved, under `install()`.

- `keras.utils.to_categorical(y=..., num_classes=..., dtype="float32")`: Keras 3 renamed
  the first argument `x` and dropped `dtype` (returning float64 for numpy input); tf.keras
  2's keywords and float32 default are taken again.
- `MultiHeadAttention._build_from_signature(query, value, key=None)`: tf.keras 2's way to
  build the layer for given inputs (TF-Ranking's document-interaction attention calls it);
  Keras 3's is `build(query_shape, value_shape, key_shape)`.
- `tf.keras.optimizers.legacy.Adagrad` / `Adam` / `Ftrl` / `RMSprop` / `SGD` / `Optimizer`
  (tf.keras 2's optimizers, with the same arguments and defaults as Keras 3's): Keras 3
  keeps the names only to raise; they become Keras 3's (a canned estimator trains with them
  as with any Keras optimizer). The tensorflow/docs migration guide passes one to
  `LinearEstimator`, with a learning rate the model_fn computes (a TF1 `exponential_decay`
  of the global step): a tensor of the traced graph, which Keras 3 refuses, so given one
  the class makes the canned estimators' graph optimizer (`canned.optimizers`, tf.keras 2's
  updates and variable names) instead; it trains only where that tensor lives, in a
  model_fn, as the tf.keras 2 one did.
- `tf.keras.__internal__.losses.compute_weighted_loss(losses, sample_weight, reduction)`
  and `Loss._get_reduction()` (tf.keras 2's helpers for a Loss subclass reducing its own
  per-example losses; TF-Ranking's listwise losses call both): Keras 3 has neither.
- A Keras metric's `updates` and a Keras variable's `ref()` / `experimental_ref()`: tf.keras
  2 code handed a head's Keras metric in `eval_metric_ops` turns it into TF1's `(value,
  update_op)` with `metric.updates[0]` and keys its variables by their refs (AdaNet's
  ensembles), and runs `variables_initializer` over them in a TF1 graph of its own
  (`initializer`). In a graph, `updates` is one op running every write of the metric's
  variables the graph holds (what `update_state` added), eagerly none.
- Keras metric variables made in a TF1 graph of one's own in no collection, as tf.keras 2
  made them (a `Saver()` there neither saves nor restores them: AdaNet's candidates'
  metrics).
- Keras auto-names counted per TF1 graph built outside a trace, as tf.keras 2 counted them
  (a library rebuilding its model in a `tf.Graph()` of its own names its variables as the
  first time: AdaNet's Keras-layer subnetworks).
- `tf.compat.v1.keras.utils.DeterministicRandomTestTool` (tf.keras 2's tool for comparing
  TF1 and TF2 code's random numbers; TensorFlow's migration-debugging guide uses it): every
  random op built in its `scope()` gets a fixed seed, the same one ("constant") or one
  counted per op ("num_random_ops").
- `from tensorflow.python.keras import models` (`layers`, `optimizers`, `losses`,
  `metrics`, `callbacks`, `regularizers`, `utils`, and `Sequential` / `Model` / `Input`):
  TensorFlow's own frozen tf.keras 2 copy, whose layers do not mix with the Keras 3 ones
  `tf.keras` gives; these names of that package become Keras 3's. Its other modules
  (`backend`, `activations`, `initializers`, ...) stay TensorFlow's: its TF1 RNN cells use
  them.
- `tf.keras.layers.experimental.SyncBatchNormalization` (tf.keras 2's batch normalization
  whose statistics are all-reduced across a distribution strategy's replicas; the Object
  Detection API subclasses it): Keras 3's `BatchNormalization(synchronized=True)`, the
  layer tf.keras 2.12+ itself made of that name (same arguments; the same layer outside a
  strategy). `tf.keras.layers.experimental.EinsumDense` is Keras 3's `EinsumDense`.
- `tf.keras.backend.set_learning_phase(0 | 1)` / `learning_phase()` (tf.keras 2's global
  training flag; the Object Detection API's model_fn sets it): the value is kept and read
  back, but Keras 3 layers do not consult it (they take `training` in their call, which
  the model_fn passes).
"""

from __future__ import annotations

import types
from typing import Any

import keras
import numpy as np
import tensorflow as tf

from keras_estimator.canned import optimizers as graph_optimizers
from keras_estimator.engine.metrics import writes_to
from keras_estimator.seam.internals import (
    keras_auto_names_per_tf1_graph,
    keras_metric_variables_as_in_tf_keras2,
    keras_variable_backing,
    legacy_keras_package,
    tf_keras_module,
)

_keras3_to_categorical = keras.utils.to_categorical

# tensorflow.python.keras attribute -> the Keras 3 object it becomes.
_LEGACY_KERAS_NAMES = {
    "models": keras.models,
    "layers": keras.layers,
    "optimizers": keras.optimizers,
    "losses": keras.losses,
    "metrics": keras.metrics,
    "callbacks": keras.callbacks,
    "regularizers": keras.regularizers,
    "utils": keras.utils,
    "Sequential": keras.Sequential,
    "Model": keras.Model,
    "Input": keras.Input,
}


def to_categorical(
    x: Any = None, num_classes: int | None = None, dtype: Any = "float32", *, y: Any = None
) -> Any:
    """tf.keras 2's `to_categorical(y, num_classes=None, dtype="float32")` on Keras 3.

    Args:
        x: Class indices (Keras 3's name); `y` is tf.keras 2's name for the same.
        num_classes: Number of classes (None: the largest index + 1).
        dtype: The result's dtype (tf.keras 2's argument, float32 by default).
        y: Class indices, by tf.keras 2's keyword.

    Returns:
        The one-hot encoding: a numpy array for numpy / list input, else a tensor.

    Example:
        >>> to_categorical(y=[0, 2], num_classes=3)   # float32 [[1, 0, 0], [0, 0, 1]]
    """
    if (x is None) == (y is None):
        raise TypeError(
            "to_categorical() takes the class indices once, as `x` (Keras 3) or `y` "
            f"(tf.keras 2). Received: x={x!r}, y={y!r}"
        )
    encoded = _keras3_to_categorical(y if x is None else x, num_classes)
    if isinstance(encoded, np.ndarray):
        return encoded.astype(dtype)
    return keras.ops.cast(encoded, dtype)


class DeterministicRandomTestTool:
    """tf.keras 2's `DeterministicRandomTestTool`: random ops built inside `scope()` draw
    from fixed seeds, so TF1 and TF2 versions of a model can be compared number for number.

    Args:
        seed: the graph-level seed every random op gets.
        mode: "constant" (every op the op seed `operation_seed`, 0 unless set) or
            "num_random_ops" (op seeds 0, 1, 2, ... in the order the ops are built).

    Raises:
        ValueError: another mode.

    Example:
        >>> tool = DeterministicRandomTestTool(mode="num_random_ops")
        >>> with tool.scope():
        ...     a = tf.random.uniform([2]); b = tf.random.uniform([2])  # op seeds 0 and 1
    """

    def __init__(self, seed: int = 42, mode: str = "constant") -> None:
        if mode not in ("constant", "num_random_ops"):
            raise ValueError(
                f"Mode arg must be 'constant' or 'num_random_ops'. Got: {mode}. Fix: pass "
                "mode='constant' or mode='num_random_ops'."
            )
        self._seed, self._mode = seed, mode
        self.operation_seed = 0
        self._used: set[int] = set()

    def scope(self) -> Any:
        """A context in which every random op built takes the tool's seeds. Entering it
        sets TensorFlow's global seed to `seed` (restarting eager random streams), as tf.keras
        2's tool did; "constant" mode restarts them at every op."""
        from keras_estimator.seam.internals import op_seeds_chosen_by

        tf.random.set_seed(self._seed)

        def choose(op_seed: Any) -> tuple[int, int]:
            chosen = self.operation_seed
            if self._mode == "constant":
                tf.random.set_seed(chosen)  # every op draws its stream from the start
                return self._seed, chosen
            if chosen in self._used:
                raise ValueError(
                    f"This DeterministicRandomTestTool would use operation seed {chosen} "
                    "again: random numbers could not match between eager code and sessions. "
                    "Fix: do not set operation_seed back to a value already used."
                )
            self._used.add(chosen)
            self.operation_seed += 1
            return self._seed, chosen

        return op_seeds_chosen_by(choose)


class SyncBatchNormalization(keras.layers.BatchNormalization):
    """tf.keras 2's `tf.keras.layers.experimental.SyncBatchNormalization`: Keras 3's
    `BatchNormalization` with `synchronized=True` (batch statistics all-reduced across the
    replicas of a distribution strategy; plain batch normalization outside one).

    Args:
        *args: `BatchNormalization`'s (`axis`, `momentum`, `epsilon`, ...), in tf.keras 2's
            order, which Keras 3 kept.
        **kwargs: `BatchNormalization`'s keywords; `synchronized` may only be True (a saved
            config holds it).

    Raises:
        ValueError: `synchronized=False`.

    Example:
        >>> layer = SyncBatchNormalization(momentum=0.9, epsilon=1e-5)
        >>> layer(tf.ones([4, 3]), training=True)
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if not kwargs.pop("synchronized", True):
            raise ValueError(
                "SyncBatchNormalization always synchronizes its statistics. Received: "
                "synchronized=False. Fix: use keras.layers.BatchNormalization for that."
            )
        super().__init__(*args, synchronized=True, **kwargs)


def _tf_keras2_layers_experimental() -> types.ModuleType:
    """`tf.keras.layers.experimental` with tf.keras 2's SyncBatchNormalization and
    EinsumDense."""
    experimental = types.ModuleType(
        "keras.layers.experimental", "tf.keras 2's layers.experimental (part)."
    )
    experimental.SyncBatchNormalization = SyncBatchNormalization  # type: ignore[attr-defined]
    experimental.EinsumDense = keras.layers.EinsumDense  # type: ignore[attr-defined]
    return experimental


_learning_phase: list[int] = [0]


def set_learning_phase(value: int | bool) -> None:
    """tf.keras 2's `backend.set_learning_phase(value)`: 0 (test) or 1 (train), kept for
    `learning_phase()`; Keras 3 layers read `training` from their call instead.

    Raises:
        ValueError: a value other than 0 or 1.
    """
    if value not in (0, 1):
        raise ValueError(
            f"Expected learning phase to be 0 or 1. Received: {value!r}. Fix: pass 0 (test) "
            "or 1 (train); Keras 3 layers take `training=` in their call."
        )
    _learning_phase[0] = int(value)


def learning_phase() -> int:
    """tf.keras 2's `backend.learning_phase()`: the last value `set_learning_phase` set
    (0 until then)."""
    return _learning_phase[0]


def _shape_of(value: Any) -> tuple | None:
    """A tensor's or a shape's dimensions as a tuple (None stays None)."""
    if value is None:
        return None
    return tuple(tf.TensorShape(getattr(value, "shape", value)).as_list())


def build_from_signature(
    self: keras.layers.MultiHeadAttention, query: Any, value: Any, key: Any = None
) -> None:
    """tf.keras 2's `MultiHeadAttention._build_from_signature` on Keras 3: builds the layer
    for inputs like `query`, `value` (and `key`), tensors or shapes.

    Example:
        >>> layer = keras.layers.MultiHeadAttention(num_heads=2, key_dim=4)
        >>> layer._build_from_signature(query=[8, 5, 16], value=[8, 5, 16])
    """
    self.build(_shape_of(query), _shape_of(value), _shape_of(key))


# tf.keras 2's loss reductions (`tf.keras.losses.Reduction`), as the values Keras 3 uses.
_REDUCTIONS = {
    "auto": "sum_over_batch_size",  # outside a distribution strategy, as tf.keras 2 read it
    "none": "none",
    None: "none",
    "sum": "sum",
    "sum_over_batch_size": "sum_over_batch_size",
}


def _reduction(reduction: Any) -> str:
    if reduction not in _REDUCTIONS:
        raise ValueError(
            f"Unknown loss reduction {reduction!r}. Expected one of tf.keras 2's "
            "tf.keras.losses.Reduction values: 'auto', 'none', 'sum', 'sum_over_batch_size'. "
            "Fix: pass one of those."
        )
    return _REDUCTIONS[reduction]


def _rank_matched(weights: tf.Tensor, losses: tf.Tensor) -> tf.Tensor:
    """`weights` with a trailing axis of size 1 dropped, or one added, to match `losses`."""
    weights_rank, losses_rank = weights.shape.rank, losses.shape.rank
    if weights_rank is None or losses_rank is None:
        return weights
    if weights_rank == losses_rank + 1 and weights.shape[-1] == 1:
        return tf.squeeze(weights, axis=-1)
    if weights_rank == losses_rank - 1 and weights_rank > 0:
        return tf.expand_dims(weights, axis=-1)
    return weights


def compute_weighted_loss(
    losses: Any,
    sample_weight: Any = None,
    reduction: Any = "sum_over_batch_size",
    name: str | None = None,
) -> tf.Tensor:
    """tf.keras 2's `tf.keras.__internal__.losses.compute_weighted_loss`: per-example losses
    times their weights (broadcast), reduced.

    Args:
        losses: The per-example losses.
        sample_weight: None, a scalar, or weights broadcastable to `losses` (a trailing
            axis of size 1 too many or too few is matched first).
        reduction: "sum_over_batch_size" (the weighted sum divided by the number of
            elements; "auto" means it), "sum", or "none" (the weighted losses).
        name: Unused (tf.keras 2's op-name scope).

    Returns:
        The reduced loss, in the dtype of `losses`.

    Example:
        >>> compute_weighted_loss([1.0, 3.0], [1.0, 0.0])  # (1 + 0) / 2 = 0.5
    """
    del name
    how = _reduction(reduction)
    losses = tf.convert_to_tensor(losses)
    given_dtype = losses.dtype
    if not given_dtype.is_floating:
        losses = tf.cast(losses, tf.float32)
    weighted = losses
    if sample_weight is not None:
        weights = _rank_matched(tf.cast(sample_weight, losses.dtype), losses)
        weighted = losses * weights
    if how == "none":
        result = weighted
    else:
        result = tf.reduce_sum(weighted)
        if how == "sum_over_batch_size":
            result = tf.math.divide_no_nan(result, tf.cast(tf.size(weighted), result.dtype))
    return tf.cast(result, given_dtype)


def loss_reduction(self: keras.losses.Loss) -> str:
    """tf.keras 2's `Loss._get_reduction()`: the loss's reduction, "auto" read as
    "sum_over_batch_size" (for `compute_weighted_loss`)."""
    return _reduction(self.reduction)


def _tf_keras2_internal() -> types.ModuleType:
    """`tf.keras.__internal__` with what tf.keras 2 code called there and Keras 3 lacks."""
    internal = types.ModuleType("keras.__internal__", "tf.keras 2's __internal__ (part).")
    losses = types.ModuleType("keras.__internal__.losses")
    losses.compute_weighted_loss = compute_weighted_loss  # type: ignore[attr-defined]
    internal.losses = losses  # type: ignore[attr-defined]
    return internal


def _learning_rate_of(args: tuple, kwargs: dict) -> Any:
    return kwargs["learning_rate"] if "learning_rate" in kwargs else (args[0] if args else None)


def legacy_optimizer_class(name: str) -> type:
    """`tf.keras.optimizers.legacy.<name>` under `install()`: Keras 3's `<name>` (a subclass,
    so `isinstance` and subclassing work), except that a graph tensor as the learning rate
    (symbolic: made in a model_fn) makes `canned.optimizers.<name>`, which takes one.

    >>> opt = legacy_optimizer_class("Ftrl")(learning_rate=0.1)  # a keras.optimizers.Ftrl
    """
    keras_class = getattr(keras.optimizers, name)
    graph_class = getattr(graph_optimizers, name)

    def __new__(cls: type, *args: Any, **kwargs: Any) -> Any:
        learning_rate = _learning_rate_of(args, kwargs)
        if tf.is_tensor(learning_rate) and not hasattr(learning_rate, "numpy"):
            return graph_class(*args, **kwargs)
        return keras_class.__new__(cls)

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        learning_rate = _learning_rate_of(args, kwargs)
        if tf.is_tensor(learning_rate):  # eager here: its value, which Keras 3 takes
            if "learning_rate" in kwargs:
                kwargs = {**kwargs, "learning_rate": float(learning_rate)}
            else:
                args = (float(learning_rate), *args[1:])
        keras_class.__init__(self, *args, **kwargs)

    # Canned estimators convert Keras' own optimizer classes (a module under `keras`) to
    # their graph optimizers, and this one is one of those. Keras serializes it under that
    # module, so `keras.optimizers`: its config (clone_model of a compiled model, saving)
    # deserializes as Keras 3's class; `keras.optimizers.legacy.<name>` is Keras 3's stub
    # that raises.
    return type(
        name,
        (keras_class,),
        {"__new__": __new__, "__init__": __init__, "__module__": "keras.optimizers"},
    )


def _metric_updates(metric: keras.metrics.Metric) -> list:
    """tf.keras 2's `Metric.updates`: in a graph, one op running the writes of the metric's
    variables that the graph holds (what its update_state calls added); eagerly none."""
    if tf.executing_eagerly():
        return []
    variables = [keras_variable_backing(v) for v in metric.variables]
    # In a TF1 graph the variables' initializers write them too: those are not updates.
    initializers = {id(getattr(v, "initializer", None)) for v in variables}
    writes = [op for op in writes_to(variables) if id(op) not in initializers]
    return [tf.group(*writes)] if writes else []


def _variable_ref(variable: keras.Variable) -> Any:
    """tf.keras 2's `ref()`: a hashable reference (Keras 3's variables are unhashable)."""
    return keras_variable_backing(variable).ref()


def _variable_initializer(variable: keras.Variable) -> Any:
    """tf.keras 2's variables were tf.Variables: in a TF1 graph, its initializer op (what
    `tf.compat.v1.variables_initializer` groups), None eagerly."""
    return getattr(keras_variable_backing(variable), "initializer", None)


def tf_keras2_attributes() -> list[tuple[Any, str, Any]]:
    """(owner, attribute, value) for `install()`: to_categorical, MultiHeadAttention's
    `_build_from_signature`, `Loss._get_reduction`, `tf.keras.__internal__.losses` and the
    `tensorflow.python.keras` names above."""
    legacy = legacy_keras_package()
    attributes: list[tuple[Any, str, Any]] = [(keras.utils, "to_categorical", to_categorical)]
    legacy_optimizers = getattr(keras.optimizers, "legacy", None)
    if legacy_optimizers is not None:
        attributes += [
            (legacy_optimizers, name, legacy_optimizer_class(name))
            for name in ("Adagrad", "Adam", "Ftrl", "RMSprop", "SGD")
        ]
        attributes.append((legacy_optimizers, "Optimizer", keras.optimizers.Optimizer))
    if not hasattr(keras.metrics.Metric, "updates"):
        attributes.append((keras.metrics.Metric, "updates", property(_metric_updates)))
    for name in ("ref", "experimental_ref"):
        if not hasattr(keras.Variable, name):
            attributes.append((keras.Variable, name, _variable_ref))
    if not hasattr(keras.Variable, "initializer"):
        attributes.append((keras.Variable, "initializer", property(_variable_initializer)))
    attributes.append(keras_auto_names_per_tf1_graph())
    attributes.append(keras_metric_variables_as_in_tf_keras2())
    if not hasattr(keras.utils, "DeterministicRandomTestTool"):
        attributes.append((keras.utils, "DeterministicRandomTestTool", DeterministicRandomTestTool))
    if not hasattr(keras.losses.Loss, "_get_reduction"):
        attributes.append((keras.losses.Loss, "_get_reduction", loss_reduction))
    tf_keras = tf_keras_module()
    if not hasattr(tf_keras, "__internal__"):
        attributes.append((tf_keras, "__internal__", _tf_keras2_internal()))
    if not hasattr(tf_keras.backend, "set_learning_phase"):
        attributes.append((tf_keras.backend, "set_learning_phase", set_learning_phase))
        attributes.append((tf_keras.backend, "learning_phase", learning_phase))
    if not hasattr(tf_keras.layers, "experimental"):
        attributes.append((tf_keras.layers, "experimental", _tf_keras2_layers_experimental()))
    if not hasattr(keras.layers.MultiHeadAttention, "_build_from_signature"):
        mha = keras.layers.MultiHeadAttention
        attributes.append((mha, "_build_from_signature", build_from_signature))
    attributes += [(legacy, name, value) for name, value in _LEGACY_KERAS_NAMES.items()]
    return attributes


__all__ = [
    "DeterministicRandomTestTool",
    "SyncBatchNormalization",
    "build_from_signature",
    "compute_weighted_loss",
    "tf_keras2_attributes",
    "to_categorical",
]
