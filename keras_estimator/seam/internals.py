"""Every TensorFlow / Keras internal keras_estimator relies on, checked and named.

tf.estimator was part of TensorFlow and used its internals freely; running its contract on
Keras 3 needs a few of them still (pruning a traced graph like `session.run(fetches)`,
TF1 summaries into collections, v1 optimizers' loss scaling under a strategy, the private
settings of TF1 hooks and savers). They are all here, behind named functions. At import
every one is checked to be where it is expected; if TensorFlow or Keras moved one, the
import fails with an ImportError naming it and the versions, instead of keras_estimator
silently training differently (gradients not averaged, a wrong loss reduction, a hang).
"""

from __future__ import annotations

import collections
import contextlib
import inspect
import itertools
import random
import re
import sys
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

from keras_estimator.seam.environment import check_environment

check_environment()  # before Keras is imported: the backend must be TensorFlow

import keras  # noqa: E402
import tensorflow as tf  # noqa: E402

from keras_estimator.seam.patching import AttributePatch, patched  # noqa: E402


def _versions() -> str:
    return f"TensorFlow {tf.__version__} and Keras {keras.__version__}"


try:
    from keras.src import optimizers as _keras_optimizers
    from keras.src.backend.common import global_state as _keras_global_state
    from keras.src.random import seed_generator as _keras_seed_generator
    from keras.src.utils import naming as _keras_naming
    from tensorflow.core.function import trace_type as _trace_type
    from tensorflow.core.function.polymorphism import function_type as _function_type
    from tensorflow.python.client import pywrap_tf_session as _pywrap_tf_session
    from tensorflow.python.data.ops import dataset_ops as _dataset_ops
    from tensorflow.python.distribute import values as _distribute_values
    from tensorflow.python.distribute.coordinator import values as _coordinator_values
    from tensorflow.python.eager import context as _context
    from tensorflow.python.eager import wrap_function as _wrap_function
    from tensorflow.python.eager.polymorphic_function import atomic_function as _atomic
    from tensorflow.python.framework import auto_control_deps as _auto_control_deps
    from tensorflow.python.framework import func_graph as _func_graph
    from tensorflow.python.framework import tensor_shape as _tensor_shape
    from tensorflow.python.ops import gen_candidate_sampling_ops as _gen_candidate_sampling_ops
    from tensorflow.python.ops import gen_image_ops as _gen_image_ops
    from tensorflow.python.ops import gen_random_ops as _gen_random_ops
    from tensorflow.python.ops import resource_variable_ops as _resource_variable_ops
    from tensorflow.python.ops import summary_ops_v2 as _summary_ops_v2
    from tensorflow.python.summary import summary as _v1_summary
    from tensorflow.python.trackable import resource as _trackable_resource
    from tensorflow.python.training import basic_session_run_hooks as _basic_hooks
    from tensorflow.python.training import checkpoint_utils as _checkpoint_utils
    from tensorflow.python.training.saving import saveable_object_util as _saveable_object_util
except ImportError as exc:  # pragma: no cover - only on an unsupported TF / Keras
    raise ImportError(
        f"keras_estimator cannot run on {_versions()}: an internal module it relies on is "
        f"missing ({exc}). Expected a TensorFlow / Keras within the range pyproject.toml "
        "pins. Fix: pip install the versions keras_estimator declares. "
        f"Received: tensorflow=={tf.__version__}, keras=={keras.__version__}"
    ) from exc

_V1 = tf.compat.v1


def _sets(function: Any) -> set[str]:
    """Attribute names a function's code reads or writes (`self._x = ...` among them)."""
    code = getattr(inspect.unwrap(function), "__code__", None) if function else None
    return set(code.co_names) if code is not None else set()


def _mro_sets(cls: type, method: str) -> set[str]:
    names: set[str] = set()
    for klass in cls.__mro__:
        names |= _sets(vars(klass).get(method))
    return names


# What a tf.distribute strategy scope pushes onto the default graph (its thread's).
_STRATEGY_CONTEXT_STACKS = (
    "_distribution_strategy_stack",
    "_variable_creator_stack",
    "_resource_creator_stack",
)


# The Python op functions of every random op whose kernel keeps the stream's state (the
# stateless ones and tf.random.Generator's, kept in a variable, are not here).
_STATEFUL_RANDOM_OPS = (
    (_gen_random_ops, ("multinomial", "parameterized_truncated_normal", "random_gamma",
                       "random_poisson", "random_poisson_v2", "random_shuffle",
                       "random_standard_normal", "random_uniform", "random_uniform_int",
                       "truncated_normal")),
    (_gen_candidate_sampling_ops, ("all_candidate_sampler", "fixed_unigram_candidate_sampler",
                                   "learned_unigram_candidate_sampler",
                                   "log_uniform_candidate_sampler",
                                   "thread_unsafe_unigram_candidate_sampler",
                                   "uniform_candidate_sampler")),
    (_gen_image_ops, ("sample_distorted_bounding_box", "sample_distorted_bounding_box_v2")),
)  # fmt: skip


# (what is checked, does it hold): read at import; every line is an internal used below.
# Nothing here may start TensorFlow's runtime (thread settings must still be possible).
def _expectations() -> list[tuple[str, bool]]:
    return [
        ("keras.src.backend.common.global_state.get/set_global_attribute",
         hasattr(_keras_global_state, "get_global_attribute")
         and hasattr(_keras_global_state, "set_global_attribute")),
        ("keras.src.utils.naming.to_snake_case (what auto_name names layers with)",
         callable(getattr(_keras_naming, "to_snake_case", None))
         and "to_snake_case" in _keras_naming.auto_name.__code__.co_names),
        ("keras.src.random.seed_generator.GLOBAL_SEED_GENERATOR",
         hasattr(_keras_seed_generator, "GLOBAL_SEED_GENERATOR")),
        ("keras.Variable._value", "_value" in _sets(keras.Variable._initialize)),
        ("keras.src.optimizers.get (what Model.compile resolves `optimizer` with)",
         callable(getattr(_keras_optimizers, "get", None))),
        ("keras.optimizers.Optimizer._learning_rate",
         "_learning_rate" in _mro_sets(keras.optimizers.Optimizer, "__init__")),
        ("keras.optimizers.Optimizer._iterations / iterations (a property)",
         "_iterations" in _mro_sets(keras.optimizers.Optimizer, "__init__")
         and isinstance(getattr(keras.optimizers.Optimizer, "iterations", None), property)),
        ("keras.Model.metrics (a property) and compile()'s _loss_tracker / _compile_metrics "
         "/ _compile_loss",
         isinstance(getattr(keras.Model, "metrics", None), property)
         and {"_loss_tracker", "_compile_metrics", "_compile_loss"}
         <= _mro_sets(keras.Model, "compile")),
        ("keras.metrics.Metric.add_variable", hasattr(keras.metrics.Metric, "add_variable")),
        ("DatasetV1.make_one_shot_iterator / make_initializable_iterator",
         hasattr(_dataset_ops.DatasetV1, "make_one_shot_iterator")
         and hasattr(_dataset_ops.DatasetV1, "make_initializable_iterator")),
        ("eager.context.eager_mode", callable(getattr(_context, "eager_mode", None))),
        ("wrap_function.WrappedFunction.prune",
         hasattr(_wrap_function.WrappedFunction, "prune")),
        ("pywrap_tf_session.TF_GraphToFunction_wrapper / TF_DeleteFunction",
         callable(getattr(_pywrap_tf_session, "TF_GraphToFunction_wrapper", None))
         and callable(getattr(_pywrap_tf_session, "TF_DeleteFunction", None))),
        ("atomic_function.AtomicFunction(name, bound_context, function_type, children, "
         "call_options, cached_graph) / CallOptions / call_flat",
         list(inspect.signature(_atomic.AtomicFunction.__init__).parameters)[1:7]
         == ["name", "bound_context", "function_type", "children", "call_options",
             "cached_graph"]
         and hasattr(_atomic, "CallOptions") and hasattr(_atomic.AtomicFunction, "call_flat")),
        ("function_type.from_structured_signature / trace_type.from_value",
         callable(getattr(_function_type, "from_structured_signature", None))
         and callable(getattr(_trace_type, "from_value", None))),
        ("Graph._get_function / _add_function_recursive",
         callable(getattr(tf.Graph, "_get_function", None))
         and callable(getattr(tf.Graph, "_add_function_recursive", None))),
        ("FuncGraph.function_captures / Graph._c_graph / Graph._functions",
         hasattr(_func_graph.FuncGraph, "function_captures")
         and isinstance(vars(tf.Graph).get("_c_graph"), property)
         and "_functions" in _sets(tf.Graph.__init__)),
        ("FuncGraph.deferred_external_captures / deferred_internal_captures",
         hasattr(_func_graph.FuncGraph, "deferred_external_captures")
         and hasattr(_func_graph.FuncGraph, "deferred_internal_captures")),
        ("resource_variable_ops.ResourceVariable",
         isinstance(getattr(_resource_variable_ops, "ResourceVariable", None), type)),
        ("summary_ops_v2._ResourceSummaryWriter",
         isinstance(getattr(_summary_ops_v2, "_ResourceSummaryWriter", None), type)),
        ("summary._should_invoke_v2_op", callable(getattr(_v1_summary, "_should_invoke_v2_op", 0))),
        ("checkpoint_utils._set_checkpoint_initializer",
         callable(getattr(_checkpoint_utils, "_set_checkpoint_initializer", None))),
        ("coordinator.values.PerWorkerValuesTypeSpec._value_spec",
         "_value_spec" in _sets(_coordinator_values.PerWorkerValuesTypeSpec.__init__)),
        ("tf.data.Iterator._type_spec", hasattr(tf.data.Iterator, "_type_spec")),
        ("tf.data.Dataset._inputs", callable(getattr(tf.data.Dataset, "_inputs", None))),
        ("tf.distribute.Strategy._scale_loss_for_estimator_enabled",
         hasattr(tf.distribute.Strategy, "_scale_loss_for_estimator_enabled")),
        ("tf.Graph._distribution_strategy_stack / _variable_creator_stack / "
         "_resource_creator_stack (settable)",
         all(getattr(vars(tf.Graph).get(name), "fset", None) is not None
             for name in _STRATEGY_CONTEXT_STACKS)),
        ("distribute.values.DistributedDelegate.values / PerReplica.values",
         isinstance(getattr(_distribute_values.DistributedDelegate, "values", None), property)
         and isinstance(getattr(_distribute_values.PerReplica, "values", None), property)),
        ("eager Context._config / _context_handle",
         {"_config", "_context_handle"} <= _sets(_context.Context.__init__)),
        ("tf.distribute.StrategyExtended._in_multi_worker_mode",
         hasattr(tf.distribute.StrategyExtended, "_in_multi_worker_mode")),
        ("tf.Graph._is_loss_scaled_by_optimizer",
         "_is_loss_scaled_by_optimizer" in _sets(tf.Graph.__init__)),
        ("CheckpointSaverHook._save_path/_timer/_listeners/_saver/_scaffold",
         {"_save_path", "_timer", "_listeners", "_saver", "_scaffold"}
         <= _sets(_V1.train.CheckpointSaverHook.__init__)),
        ("SecondOrStepTimer._every_steps/_every_secs",
         {"_every_steps", "_every_secs"} <= _sets(_V1.train.SecondOrStepTimer.__init__)),
        ("Saver._max_to_keep/_keep_checkpoint_every_n_hours",
         {"_max_to_keep", "_keep_checkpoint_every_n_hours"} <= _sets(_V1.train.Saver.__init__)),
        ("Saver.build", callable(getattr(_V1.train.Saver, "build", None))),
        ("LoggingTensorHook._log_at_end",
         "_log_at_end" in _sets(_V1.train.LoggingTensorHook.__init__)),
        ("LoggingTensorHook._formatter",
         "_formatter" in _sets(_V1.train.LoggingTensorHook.__init__)),
        ("saveable_object_util.validate_and_slice_inputs / SaveableObject.specs",
         callable(getattr(_saveable_object_util, "validate_and_slice_inputs", None))),
        ("FinalOpsHook._final_ops", "_final_ops" in _sets(_V1.train.FinalOpsHook.__init__)),
        ("basic_session_run_hooks._as_graph_element (LoggingTensorHook.begin resolves with it)",
         callable(getattr(_basic_hooks, "_as_graph_element", None))),
        ("TensorShape._v2_behavior (a property read by __getitem__ / __iter__)",
         isinstance(vars(_tensor_shape.TensorShape).get("_v2_behavior"), property)
         and "_v2_behavior" in _sets(_tensor_shape.TensorShape.__getitem__)),
        ("eager.context.default_execution_mode / GRAPH_MODE",
         hasattr(_context, "default_execution_mode") and hasattr(_context, "GRAPH_MODE")),
        ("eager Context._set_global_seed sets _seed and _rng; clear_kernel_cache",
         {"_seed", "_rng"} <= _sets(_context.Context._set_global_seed)
         and callable(getattr(_context.Context, "clear_kernel_cache", None))),
        ("gen_random_ops / gen_candidate_sampling_ops / gen_image_ops stateful random ops",
         all(callable(getattr(module, name, None))
             for module, names in _STATEFUL_RANDOM_OPS for name in names)),
        ("Graph.experimental_acd_manager / AutomaticControlDependencies._n_operations (the "
         "ops its exit orders)",
         "experimental_acd_manager" in _sets(tf.Graph.__init__)
         and "_n_operations" in _sets(_auto_control_deps.AutomaticControlDependencies.__enter__)
         and "_n_operations" in _sets(_auto_control_deps.AutomaticControlDependencies.__exit__)),
        ("Operation._update_input / _control_outputs / _control_flow_context",
         callable(getattr(tf.Operation, "_update_input", None))
         and hasattr(tf.Operation, "_control_outputs")
         and "_control_flow_context" in _sets(tf.Operation._init)),
        ("trackable.resource.ResourceTracker / resource_tracker_scope",
         callable(getattr(_trackable_resource, "resource_tracker_scope", None))
         and hasattr(getattr(_trackable_resource, "ResourceTracker", None), "resources")),
    ]  # fmt: skip


def check_internals() -> list[str]:
    """The internals that are not where keras_estimator expects them (empty: all are)."""
    return [what for what, holds in _expectations() if not holds]


_missing = check_internals()
if _missing:  # pragma: no cover - only on an unsupported TF / Keras
    raise ImportError(
        f"keras_estimator cannot run on {_versions()}: these TensorFlow / Keras internals "
        f"moved or were removed: {', '.join(_missing)}. Expected a TensorFlow / Keras within "
        "the range pyproject.toml pins. Fix: pip install the versions keras_estimator declares. "
        f"Received: tensorflow=={tf.__version__}, keras=={keras.__version__}"
    )

# -- variables ------------------------------------------------------------------------------
ResourceVariable = _resource_variable_ops.ResourceVariable  # GlobalStepVariable's base


def keras_variable_backing(variable: Any) -> Any:
    """The tf.Variable behind a Keras 3 variable (itself for a plain tf.Variable)."""
    return variable._value if isinstance(variable, keras.Variable) else variable


def keras_optimizer_learning_rate(optimizer: keras.optimizers.Optimizer) -> Any:
    """A Keras optimizer's learning rate as given: a variable or a LearningRateSchedule."""
    return optimizer._learning_rate


@contextlib.contextmanager
def keras_optimizers_as_in_tf1_graph(
    apply_gradients: Callable[..., Any],
    minimize: Callable[..., Any],
    get_updates: Callable[..., Any],
    get_gradients: Callable[..., Any],
) -> Iterator[None]:
    """Inside, Keras 3 optimizers have tf.keras 2's graph-mode surface: `apply_gradients`
    is `apply_gradients(optimizer, grads_and_vars, original)` (`original(optimizer, pairs)`
    is Keras 3's own), `minimize(optimizer, loss, var_list, ...)`,
    `get_updates(optimizer, loss, params)` and `get_gradients(optimizer, loss, params)`
    exist, `get_config()` works (it reads the learning rate's value), and
    `optimizer.iterations = variable` is allowed (the canned estimators set the global
    step there). Outside, Keras 3's own methods are back."""
    cls = keras.optimizers.Optimizer
    original_apply = cls.apply_gradients
    original_config = cls.get_config
    iterations = cls.iterations

    def set_iterations(self: Any, variable: Any) -> None:
        self._iterations = variable

    def apply(self: Any, grads_and_vars: Any, *args: Any, **kwargs: Any) -> Any:
        return apply_gradients(self, grads_and_vars, original_apply, *args, **kwargs)

    def get_config(self: Any) -> dict:
        # Keras 3 reads its learning-rate variable with `.numpy()`, which fails in a trace;
        # tf.keras 2 gave the value in a graph too. Subclasses reach this through super().
        with tf.init_scope():
            return original_config(self)

    with (
        patched(cls, "apply_gradients", apply),
        patched(cls, "minimize", minimize),
        patched(cls, "get_updates", get_updates),
        patched(cls, "get_gradients", get_gradients),
        patched(cls, "get_config", get_config),
        patched(cls, "iterations", property(iterations.fget, set_iterations)),
    ):
        yield


class KerasCompiledParts(NamedTuple):
    """What `compile()` gave a Keras 3 model (each None when it has none)."""

    loss_tracker: Any  # the Mean of the loss fit / evaluate report
    compile_metrics: Any  # the container of compile()'s metrics (built on first use)
    compile_loss: Any  # the container of compile()'s losses (built on first use)


def keras_compiled_parts(model: keras.Model) -> KerasCompiledParts:
    """The loss tracker, metrics container and loss container of a compiled Keras model."""
    return KerasCompiledParts(
        getattr(model, "_loss_tracker", None),
        getattr(model, "_compile_metrics", None),
        getattr(model, "_compile_loss", None),
    )


@contextlib.contextmanager
def keras_models_as_in_tf1_graph(
    metrics: Callable[[Any, list], list], get_updates_for: Callable[[Any, Any], list]
) -> Iterator[None]:
    """Inside, a Keras 3 model's `metrics` is `metrics(model, keras3_metrics)`, and layers
    have tf.keras 2's `get_updates_for(inputs)`; outside, Keras 3's own are back."""
    keras3_metrics = keras.Model.metrics  # the property Keras 3's Trainer defines

    def model_metrics(self: Any) -> list:
        return metrics(self, keras3_metrics.fget(self))

    with (
        patched(keras.Model, "metrics", property(model_metrics)),
        patched(keras.layers.Layer, "get_updates_for", get_updates_for),
    ):
        yield


# The settings each tf.compat.v1.train optimizer keeps (private attributes, as given to its
# constructor): class name -> {constructor argument: attribute}.
_V1_OPTIMIZER_SETTINGS: dict[str, dict[str, str]] = {
    "GradientDescentOptimizer": {"learning_rate": "_learning_rate"},
    "MomentumOptimizer": {"learning_rate": "_learning_rate", "momentum": "_momentum",
                          "use_nesterov": "_use_nesterov"},
    "AdamOptimizer": {"learning_rate": "_lr", "beta1": "_beta1", "beta2": "_beta2",
                      "epsilon": "_epsilon"},
    "RMSPropOptimizer": {"learning_rate": "_learning_rate", "decay": "_decay",
                         "momentum": "_momentum", "epsilon": "_epsilon", "centered": "_centered"},
    "AdagradOptimizer": {"learning_rate": "_learning_rate",
                         "initial_accumulator_value": "_initial_accumulator_value"},
    "AdadeltaOptimizer": {"learning_rate": "_lr", "rho": "_rho", "epsilon": "_epsilon"},
    "FtrlOptimizer": {"learning_rate": "_learning_rate",
                      "learning_rate_power": "_learning_rate_power",
                      "initial_accumulator_value": "_initial_accumulator_value",
                      "l1_regularization_strength": "_l1_regularization_strength",
                      "l2_regularization_strength": "_l2_regularization_strength",
                      "l2_shrinkage_regularization_strength":
                          "_l2_shrinkage_regularization_strength",
                      "beta": "_beta"},
}  # fmt: skip


def v1_optimizer_settings(optimizer: tf.compat.v1.train.Optimizer) -> dict[str, Any] | None:
    """The constructor arguments a `tf.compat.v1.train` optimizer was made with (None for a
    class not listed, or one that does not keep them where expected)."""
    names = _V1_OPTIMIZER_SETTINGS.get(type(optimizer).__name__)
    if names is None or not type(optimizer).__module__.startswith("tensorflow."):
        return None
    held = vars(optimizer)
    if any(attr not in held for attr in names.values()):
        return None
    return {argument: held[attr] for argument, attr in names.items()}


def keras_optimizer_identifiers(convert: Callable[[Any], Any]) -> AttributePatch:
    """Until `.undo()`: `Model.compile(optimizer=x)` (Keras' `optimizers.get`) first asks
    `convert(x)`; a Keras optimizer it returns is used, None leaves `x` to Keras."""
    original = _keras_optimizers.get

    def get(identifier: Any) -> Any:
        converted = convert(identifier)
        return original(identifier if converted is None else converted)

    return AttributePatch(_keras_optimizers, "get", get)


# -- random streams ------------------------------------------------------------------------


class _EagerRandomKernels:
    """Which stateful random ops ran eagerly, and under which seed, since TF's kernels were
    last cleared.

    Such an op's kernel is cached by its seeds and keeps its stream's position: run again
    with the same seeds after a reseed (a seeded call's input_fn, initializers of a new
    Estimator's variables), it would go on where it stopped. Only a cleared kernel cache
    starts it at its seed, and clearing drops every compiled function's kernels too
    (instantiating the canned DNN's loop again: ~0.15 s). `tf.random.set_seed` always
    clears; here the clear waits until such a kernel is about to run again after a reseed,
    so a call that draws nothing eagerly (a second train() of variables made in the
    first) keeps its kernels. Only while a call sets up (from `reseed` to
    `defer_random_kernel_clears`: its input_fn, its model's initializers) does a repeat
    clear at once; later (a hook, a tf.data thread) a clear would restart the step's own
    streams mid-call, so the repeat is noted and the next reseed clears.
    """

    # Past this many distinct kernels noted, no more are noted and the next reseed clears
    # (an eager loop drawing with a fresh seed each time must not grow this forever).
    _MOST_NOTED = 10_000

    def __init__(self) -> None:
        self.must_clear = True  # at the next reseed; before watching, anything may have run
        self.setting_up = False  # between a reseed and defer_random_kernel_clears()
        self._this_seed: set[tuple] = set()  # kernels run since the last reseed
        self._earlier: set[tuple] = set()  # those run before it, since the last clear
        self._patches: list[AttributePatch] = []

    def watch(self) -> None:
        if self._patches:
            return
        for module, names in _STATEFUL_RANDOM_OPS:
            for name in names:
                self._patches.append(
                    AttributePatch(module, name, self._noting(name, getattr(module, name)))
                )

    def _noting(self, name: str, op: Callable) -> Callable:
        signature = inspect.signature(op)

        def run_op(*args: Any, **kwargs: Any) -> Any:
            if _context.executing_eagerly():
                try:
                    bound = signature.bind(*args, **kwargs).arguments
                except TypeError:
                    return op(*args, **kwargs)  # TF's own error for arguments it does not take
                self._note((name, bound.get("seed") or 0, bound.get("seed2") or 0))
            return op(*args, **kwargs)

        return run_op

    def _note(self, kernel: tuple) -> None:
        # Fewer attributes than TF's kernel cache keys on: kernels told apart only by the
        # others share a key here, which can only clear more often.
        if kernel in self._earlier:
            if self.setting_up:
                clear_kernels()  # its stream must start at the seed again
            else:
                self.must_clear = True
        if self.must_clear:
            return  # the next reseed clears everything: nothing more to tell apart
        self._this_seed.add(kernel)
        if len(self._this_seed) + len(self._earlier) > self._MOST_NOTED:
            self.must_clear = True

    def reseeded(self) -> bool:
        """Notes a reseed; whether the kernels must be cleared now."""
        self.setting_up = True
        if self.must_clear:
            return True
        self._earlier |= self._this_seed
        self._this_seed = set()
        return False

    def cleared(self) -> None:
        self.must_clear = False
        self._this_seed, self._earlier = set(), set()


_eager_random_kernels = _EagerRandomKernels()


def reseed(seed: int) -> None:
    """`tf.random.set_seed(seed)`, clearing TF's kernel cache only when needed (see
    _EagerRandomKernels): eager random streams start at the seed again, and compiled
    functions keep their kernels unless a noted eager random kernel runs again. Ops inside
    a compiled function whose kernels keep state restart only with `clear_kernels()`."""
    _eager_random_kernels.watch()
    ctx = _context.context()
    seed = int(seed)  # RunConfig's int (a numpy integer too, as TF converts it)
    # What Context._set_global_seed sets, without its TFE_ContextClearCaches.
    ctx._seed, ctx._rng = seed, random.Random(seed)
    if _eager_random_kernels.reseeded():
        clear_kernels()


def defer_random_kernel_clears() -> None:
    """The call's steps run from here: an eager random kernel of an earlier seed run again
    no longer clears TF's kernels at once (that would restart the step's own streams in
    the middle of the call); the next reseed clears them instead."""
    _eager_random_kernels.setting_up = False


def clear_kernels() -> None:
    """Drops every kernel TF keeps (eager ops' and compiled functions'): random streams in
    them start at their seeds again on the next run."""
    _context.context().clear_kernel_cache()
    _eager_random_kernels.cleared()


# -- tracing -------------------------------------------------------------------------------
def eager_mode() -> contextlib.AbstractContextManager:
    """Eager execution inside, whatever the caller's mode (TF1 graph mode included)."""
    return _context.eager_mode()


def eager_execution_disabled() -> bool:
    """Whether `tf.compat.v1.disable_eager_execution()` (or `disable_v2_behavior()`) made
    graph mode the process default (not merely a `with tf.Graph().as_default():` block)."""
    return _context.default_execution_mode == _context.GRAPH_MODE


def tensor_shapes_chosen_by_caller(wants_tf1: Callable[[Any], bool]) -> AttributePatch:
    """Until `.undo()`: a `TensorShape` indexed, iterated or printed by code whose frame
    `wants_tf1(frame)` gives TF1 dimensions (`shape[i]` a `tf.compat.v1.Dimension` with
    `.value`, as `tf.compat.v1.disable_v2_tensorshape()` made them process-wide); everyone
    else (TensorFlow, Keras, keras_estimator) keeps TF2's `int` / `None`."""
    process_wide = _tensor_shape.TensorShape._v2_behavior  # a property

    def v2_behavior(shape: Any) -> bool:
        # Frame 0: this getter; 1: TensorShape.__getitem__ / __iter__ / __str__ / __repr__.
        if wants_tf1(sys._getframe(2)):
            return False
        return process_wide.fget(shape)

    return AttributePatch(_tensor_shape.TensorShape, "_v2_behavior", property(v2_behavior))


def graph_pruner(graph: tf.Graph) -> Any:
    """A wrapper of a traced graph whose `.prune(feeds, fetches)` gives a function running
    only what `fetches` need: TF1's `session.run(fetches, feed_dict)` semantics."""
    return _wrap_function.WrappedFunction(graph, variable_holder=None)


_PRUNED_NAMES = itertools.count()


@contextlib.contextmanager
def saver_unsharded(saver: Any) -> Iterator[None]:
    """A `tf.compat.v1.train.Saver(sharded=True)` saves unsharded inside: a sharded Saver
    builds its ops per device, which eager mode refuses; on one host a V2 checkpoint's
    files are the same either way."""
    sharded, saver._sharded = saver._sharded, False
    try:
        yield
    finally:
        saver._sharded = sharded


def assignment_op(variable: Any) -> tf.Operation | None:
    """The op of `v.assign(x)` made in a graph (TF returns the variable, unread, with the
    assignment as its `op`); None for a plain (eager) variable."""
    try:
        op = variable.op
    except AttributeError:  # an eager variable: "Tensor.op is undefined"
        return None
    return op if isinstance(op, tf.Operation) and op.type.startswith("Assign") else None


def recomputed_from_variables(fetch: tf.Tensor | tf.Operation) -> Callable[[], Any]:
    """A function computing `fetch` (a tensor or an op) of a traced graph anew from the
    variables it reads, now (TF1's `session.run(fetch)` outside a step: a metric's value or
    an assignment in a hook). An op runs and gives None.

    Only the data inputs are followed, op by op, into a new function: the trace's control
    edges order it within the step, which does not run here. Raises ValueError when it
    needs the step's input (a placeholder of the trace) or calls a function.
    """
    graph = fetch.graph
    outer = {id(internal): external for external, internal in getattr(graph, "captures", ())}

    def copy_op(op: tf.Operation, copies: dict) -> tf.Operation:
        if op.type == "Placeholder" or functions_called_by(op) != []:
            raise ValueError(
                f"{fetch.name} cannot be computed outside the step: it needs {op.name} "
                f"({op.type}), the step's input or a function of the step"
            )
        if id(op) not in copies:
            inputs = [copy(t, copies) for t in op.inputs]
            attrs = {k: op.node_def.attr[k] for k in op.node_def.attr}
            copies[id(op)] = tf.compat.v1.get_default_graph().create_op(
                op.type, inputs, [t.dtype for t in op.outputs], name=op.name.split("/")[-1],
                attrs=attrs,
            )  # fmt: skip
        return copies[id(op)]

    def copy(value: tf.Tensor, copies: dict) -> tf.Tensor:
        if id(value) in outer:
            return outer[id(value)]  # a variable's handle (or a constant) the step captured
        return copy_op(value.op, copies).outputs[value.value_index]

    def compute() -> Any:
        if isinstance(fetch, tf.Operation):
            copy_op(fetch, {})
            return None
        return copy(fetch, {})

    function = tf.function(compute, autograph=False)
    function.get_concrete_function()  # raises here, not at the first call, when it cannot
    return function


def prune_graph(
    graph: Any, num_args: int | None, fetches: Any, with_arguments: bool = True
) -> Callable[..., Any]:
    """`fetches` of a traced function's graph, as a function of its first `num_args`
    (flat) inputs: only what they need runs, as TF1's `session.run(fetches)` ran (tensors
    are returned, operations run and give None). Values the graph captures at call time (a
    strategy's collective keys) are taken at each call, as the traced function does. None
    in `fetches` stays None. With `with_arguments=False` the function takes no arguments
    (what the fetches need are the captured variables and constants; ValueError when they
    need an argument: the step's input data). `num_args=None`: every input not captured.

    The function is cut out of the traced graph by TensorFlow's C API (the ops the fetches
    need, found by following data and control inputs as `WrappedFunction.prune` does),
    without copying the graph op by op in Python (~2 ms an op there: 0.5 s for a small
    model's training step, on the first hook fetch and the first evaluate()).
    """
    flat = tf.nest.flatten(fetches, expand_composites=True)
    positions = [i for i, f in enumerate(flat) if isinstance(f, tf.Tensor)]
    outputs = [flat[i] for i in positions]
    run_ops = [f for f in flat if isinstance(f, tf.Operation)]
    # The function's inputs in the order of its call (arguments, captured values, values
    # captured at call time): a value captured after the trace (a hook's fetch of a variable
    # the step never read) comes after the call-time ones in `graph.inputs`.
    deferred = tf.nest.flatten(graph.deferred_internal_captures, expand_composites=True)
    if num_args is None:  # every input that is not a capture
        num_args = len(graph.inputs) - len(graph.internal_captures) - len(deferred)
    inputs = [*graph.inputs[:num_args], *graph.internal_captures, *deferred]
    if {id(t) for t in inputs} != {id(t) for t in graph.inputs} or len(inputs) != len(graph.inputs):
        raise ValueError(  # TensorFlow changed how a traced graph orders its inputs
            f"Cannot prune a traced step on {_versions()}: its graph's {len(graph.inputs)} "
            f"inputs are not its {num_args} arguments, {len(graph.internal_captures)} "
            f"captures and {len(deferred)} call-time captures. Fix: use the TensorFlow "
            f"version keras_estimator declares. Received: graph={graph.name!r}"
        )
    argument_ops = set() if with_arguments else {id(t.op) for t in inputs[:num_args]}
    inputs = inputs if with_arguments else inputs[num_args:]
    input_ops = {id(t.op) for t in inputs}
    body: dict[int, Any] = {}  # the ops the fetches need, in no particular order
    to_visit = [t.op for t in outputs] + run_ops
    while to_visit:
        op = to_visit.pop()
        if id(op) in body or id(op) in input_ops:
            continue
        if id(op) in argument_ops:
            raise ValueError(
                f"Cannot run {[getattr(f, 'name', f) for f in flat]} outside the step: they "
                "depend on the step's input (features / labels). Expected tensors and ops "
                "computed from variables and constants. Fix: compute the value in the "
                f"model_fn's step instead. Received: input={op.name!r}"
            )
        if op.graph is not graph:
            raise ValueError(
                f"Cannot fetch {op.name!r}: it is not an op of the traced step "
                f"{graph.name!r}. Expected a tensor the model_fn created (outside any "
                "tf.while_loop / tf.cond body), fetched by a hook of this call. "
                f"Received: fetch={op.name!r}"
            )
        body[id(op)] = op
        to_visit.extend(t.op for t in op.inputs)
        to_visit.extend(op.control_inputs)
    name = f"{re.sub(r'[^A-Za-z0-9_]', '_', str(graph.name))}_fetches_{next(_PRUNED_NAMES)}"
    with graph._c_graph.get() as c_graph:
        c_function = _pywrap_tf_session.TF_GraphToFunction_wrapper(
            c_graph,
            name,
            False,
            [op._c_op for op in body.values()],
            [t._as_tf_output() for t in inputs],
            [t._as_tf_output() for t in outputs],
            [],
            [op._c_op for op in run_ops],
            [],
            None,
            "",
        )
    bound_context = _context.context()
    bound_context.add_c_function(c_function)
    _pywrap_tf_session.TF_DeleteFunction(c_function)
    function_type = _function_type.from_structured_signature(
        (tuple(_trace_type.from_value(t) for t in inputs), {}),
        tuple(_trace_type.from_value(t) for t in outputs),
        {},
    )
    function = _atomic.AtomicFunction(
        name,
        bound_context,
        function_type,
        list(graph._functions.values()),
        _atomic.CallOptions(
            collective_manager_ids_used=getattr(graph, "collective_manager_ids_used", []),
            control_captures=graph.function_captures.control,
            is_stateful=any(op._is_stateful for op in body.values()),
        ),
        cached_graph=None,
    )
    captured = list(graph.external_captures)
    call_time = list(graph.deferred_external_captures)

    def run(*flat_args: Any) -> Any:
        values = function.call_flat(
            *flat_args,
            *captured,
            *tf.nest.flatten([value() for value in call_time], expand_composites=True),
        )
        results: list[Any] = [None] * len(flat)
        for position, value in zip(positions, values or ()):  # None: only ops were run
            results[position] = value
        return tf.nest.pack_sequence_as(fetches, results, expand_composites=True)

    return run


@contextlib.contextmanager
def fresh_keras_auto_names() -> Iterator[None]:
    """Keras auto-names (dense, dense_1, ...) restart inside, as in a fresh TF1 graph."""
    previous = _keras_global_state.get_global_attribute("object_name_uids")
    _keras_global_state.set_global_attribute("object_name_uids", collections.defaultdict(int))
    try:
        yield
    finally:
        _keras_global_state.set_global_attribute("object_name_uids", previous)


_KERAS_NAMES_KEY = "keras_estimator_keras_auto_name_uids"


def keras_auto_names_per_tf1_graph() -> tuple[Any, str, Callable[[str], str]]:
    """`(owner, attribute, replacement)` for `install()`: Keras auto-names (conv2d,
    conv2d_1, ...) count per TF1 graph built outside a trace, as tf.keras 2's did: a
    library that rebuilds its model in a `tf.Graph()` of its own (AdaNet's bookkeeping)
    names its layers, and so its variables, as it did the first time (Keras 3 counts once
    per process). Eagerly and in traces (see `fresh_keras_auto_names`) Keras counts."""
    original = _keras_naming.uniquify

    def uniquify(name: str) -> str:
        graph = tf.compat.v1.get_default_graph()
        if tf.executing_eagerly() or hasattr(graph, "captures"):
            return original(name)
        kept = graph.get_collection_ref(_KERAS_NAMES_KEY)
        if not kept:
            kept.append(collections.defaultdict(int))
        previous = _keras_global_state.get_global_attribute("object_name_uids")
        _keras_global_state.set_global_attribute("object_name_uids", kept[0])
        try:
            return original(name)
        finally:
            _keras_global_state.set_global_attribute("object_name_uids", previous)

    return _keras_naming, "uniquify", uniquify


def tensor_equality_as_in_tf1_graphs() -> contextlib.AbstractContextManager:
    """Within it, `==` between tensors is identity and tensors hash by identity, as in the
    TF1 graph 2.15 built a model_fn in (`executing_eagerly_outside_functions()` was False
    there): a model_fn comparing namedtuples that hold tensors (`x in list`, AdaNet's
    ensembles) or keying dicts by tensors works as it did. `tf.equal` stays elementwise."""
    from tensorflow.python.framework import tensor as tensor_module

    return patched(tensor_module.Tensor, "_USE_EQUALITY", False)


def keras2_private_layer_names() -> contextlib.AbstractContextManager:
    """Within it, Keras names a layer of a class starting with `_` as tf.keras 2 did.

    Keras 3 names an instance of `class _Add(Layer)` `__add`, which TensorFlow refuses as a
    root name scope (DeepCTR's `_Add` called in a model_fn, outside any model's scope);
    tf.keras 2 named it `private__add`, and so the layer's variables in 2.15's checkpoints.
    """
    original = _keras_naming.to_snake_case

    def to_snake_case(name: str) -> str:
        snake = original(name)
        return "private" + snake if snake.startswith("_") else snake

    return patched(_keras_naming, "to_snake_case", to_snake_case)


@contextlib.contextmanager
def keras_global_seed_generator_reset() -> Iterator[None]:
    """Keras' global SeedGenerator starts afresh inside (from the seeded Python `random`);
    the caller's generator is back afterwards."""
    key = _keras_seed_generator.GLOBAL_SEED_GENERATOR
    previous = _keras_global_state.get_global_attribute(key)
    _keras_global_state.set_global_attribute(key, None)
    try:
        yield
    finally:
        _keras_global_state.set_global_attribute(key, previous)


def savers_without_ops() -> contextlib.AbstractContextManager:
    """`tf.compat.v1.train.Saver` built inside: no SaveV2/RestoreV2 ops (a traced step would
    run them on every call); keras_estimator writes checkpoints itself."""
    return patched(_V1.train.Saver, "build", lambda saver: None)


def summary_writers_kept(writers: list) -> contextlib.AbstractContextManager:
    """Summary writers created inside are appended to `writers` (kept alive: a compiled
    step writing through a collected writer would write to a deleted resource)."""
    writer_class = _summary_ops_v2._ResourceSummaryWriter
    original = writer_class.__init__

    def init_and_keep(self: Any, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        writers.append(self)

    return patched(writer_class, "__init__", init_and_keep)


# The callbacks of the traces being made, per graph: what a Keras metric variable made in
# that graph is handed to (the engine's store marks it local).
_METRIC_VARIABLE_CALLBACKS_KEY = "keras_estimator_keras_metric_variables"
_keras_metric_add_variable = keras.metrics.Metric.add_variable


def _add_metric_variable(self: Any, *args: Any, **kwargs: Any) -> Any:
    """Keras' `Metric.add_variable`, then: in a trace whose scope asked for it, the variable
    goes to its callback; in a TF1 graph of the caller's own, it leaves GLOBAL_VARIABLES
    (tf.keras 2 made metric variables in no collection: a Saver there neither saves nor
    restores them). Eagerly nothing more."""
    variable = _keras_metric_add_variable(self, *args, **kwargs)
    if tf.executing_eagerly():
        return variable
    graph = tf.compat.v1.get_default_graph()
    callbacks = graph.get_collection(_METRIC_VARIABLE_CALLBACKS_KEY)
    backing = keras_variable_backing(variable)
    if callbacks:
        callbacks[-1](backing)
    elif not hasattr(graph, "captures"):
        kept = graph.get_collection_ref(tf.compat.v1.GraphKeys.GLOBAL_VARIABLES)
        kept[:] = [v for v in kept if v is not backing]
    return variable


@contextlib.contextmanager
def keras_metric_variables_seen(on_variable: Callable[[Any], None]) -> Iterator[None]:
    """Calls `on_variable(tf_variable)` for each variable a Keras metric creates inside (in
    the default graph of entry: the trace being made)."""
    callbacks = tf.compat.v1.get_default_graph().get_collection_ref(_METRIC_VARIABLE_CALLBACKS_KEY)
    callbacks.append(on_variable)
    try:
        with patched(keras.metrics.Metric, "add_variable", _add_metric_variable):
            yield
    finally:
        callbacks.remove(on_variable)


def keras_metric_variables_as_in_tf_keras2() -> tuple[Any, str, Callable]:
    """`(owner, attribute, replacement)` for `install()`: Keras metric variables made in a
    TF1 graph of the caller's own are in no collection, as tf.keras 2's were (AdaNet's
    ensembles' metrics in its bookkeeping graphs). The same replacement the engine's traces
    enter (`keras_metric_variables_seen`), so the two share one patch."""
    return keras.metrics.Metric, "add_variable", _add_metric_variable


def v1_summaries_to_collections() -> contextlib.AbstractContextManager:
    """`tf.compat.v1.summary.*` inside adds ops to the SUMMARIES collection (what
    `merge_all()` and SummarySaverHooks read) instead of writing to a default v2 writer."""
    return patched(_v1_summary, "_should_invoke_v2_op", lambda: False)


def functions_called_by(op: tf.Operation) -> list[Any] | None:
    """The functions `op`'s attributes call (a cond's branches, a call's body), as its
    graph or a graph around it holds them; None when one is not found."""
    found = []
    for value in op.node_def.attr.values():
        names = [value.func.name] if value.HasField("func") else [f.name for f in value.list.func]
        for name in names:
            graph, function = op.graph, None
            while graph is not None and function is None:
                function = graph._get_function(name)
                graph = getattr(graph, "outer_graph", None)
            if function is None:
                return None
            found.append(function)
    return found


def remake_op(op: tf.Operation, inputs: list[tf.Tensor], name: str) -> tf.Operation:
    """`op` made again in the current default graph on `inputs`: same type, attributes and
    device (colocation with ops of the other graph left out), the functions it calls added
    to that graph. Inputs from other graphs are captured as any function captures them."""
    graph = tf.compat.v1.get_default_graph()
    for function in functions_called_by(op) or []:
        graph._add_function_recursive(function)
    attrs = {key: value for key, value in op.node_def.attr.items() if key != "_class"}
    with graph.device(op.device):  # where the model_fn put it, if it said
        return graph.create_op(
            op.type, inputs, [t.dtype for t in op.outputs], attrs=attrs, name=name
        )


def rewire_consumers(tensor: tf.Tensor, replacement: tf.Tensor) -> None:
    """Every op that takes `tensor` as an input takes `replacement` instead (TF1's
    graph_editor reroute; the graph is still being traced)."""
    for consumer in tensor.consumers():
        for index, given in enumerate(consumer.inputs):
            if given.op is tensor.op and given.value_index == tensor.value_index:
                consumer._update_input(index, replacement)


def plain_data_op(op: tf.Operation) -> bool:
    """True when `op` is outside TF1 control flow and no op waits on it by a control edge:
    its outputs can be rewired to another op's."""
    return op._control_flow_context is None and not op._control_outputs


def checkpoint_initializers_recorded(
    record: Callable[[Any, Any, str, str], None],
) -> contextlib.AbstractContextManager:
    """`init_from_checkpoint` inside resolves its map as TensorFlow does, then calls
    `record(variable, checkpoint_file, tensor_name, slice_spec)` instead of replacing the
    variable's initializer."""

    def set_initializer(variable: Any, ckpt_file: Any, tensor_name: str, slice_spec: str,
                        name: str = "") -> None:  # fmt: skip
        record(variable, ckpt_file, tensor_name, slice_spec)

    return patched(_checkpoint_utils, "_set_checkpoint_initializer", set_initializer)


@contextlib.contextmanager
def v1_iterators_made_by(make: Callable[[Any], Any]) -> Iterator[None]:
    """`dataset.make_one_shot_iterator()` / `make_initializable_iterator()` and their
    `tf.compat.v1.data` functions return `make(dataset)` inside."""
    with (
        patched(_dataset_ops.DatasetV1, "make_one_shot_iterator", lambda d, *a, **k: make(d)),
        patched(_dataset_ops.DatasetV1, "make_initializable_iterator",
                lambda d, *a, **k: make(d)),
        patched(_V1.data, "make_one_shot_iterator", lambda d, *a, **k: make(d)),
        patched(_V1.data, "make_initializable_iterator", lambda d, *a, **k: make(d)),
    ):  # fmt: skip
        yield


# -- tf.data -------------------------------------------------------------------------------
def draws_from_several_datasets(dataset: tf.data.Dataset) -> bool:
    """Whether `dataset` or one of its inputs picks elements among datasets by a selector
    (`choose_from_datasets`, `sample_from_datasets`): TF 2.21 reports such a dataset infinite
    when one of its datasets is, even where the selector or `stop_on_empty_dataset` ends it.
    True where the inputs cannot be walked."""
    try:
        seen, todo = set(), [dataset]
        while todo:
            each = todo.pop()
            if type(each).__name__ == "_DirectedInterleaveDataset":
                return True
            if id(each) not in seen:
                seen.add(id(each))
                todo.extend(each._inputs())
        return False
    except Exception:  # noqa: BLE001 - any failure to walk: treat it as possibly ending
        return True


# -- distribution --------------------------------------------------------------------------
def estimator_loss_scaling(strategy: tf.distribute.Strategy) -> contextlib.AbstractContextManager:
    """tf.estimator's contract with v1 optimizers under a strategy: inside, they scale the
    loss by 1/replicas (gradients averaged) unless the last tf.losses reduction was SUM."""
    return strategy._scale_loss_for_estimator_enabled()


def loss_scaled_by_optimizer(graph: tf.Graph) -> bool:
    """Whether the last v1 optimizer in `graph` scaled the loss (then the reported loss is
    the mean over replicas, else their sum: tf.estimator's rule)."""
    return bool(graph._is_loss_scaled_by_optimizer)


@contextlib.contextmanager
def outside_strategy_scopes() -> Iterator[None]:
    """Inside, no tf.distribute strategy scope is entered and no variable or resource
    creator is installed, as in the fresh TF1 graph tf.estimator built for each call (an
    evaluation run by a saving listener during distributed training, say); the caller's
    scopes are back afterwards. Scopes entered inside must be exited inside."""
    graph = tf.compat.v1.get_default_graph()
    saved = {name: getattr(graph, name) for name in _STRATEGY_CONTEXT_STACKS}
    for name in _STRATEGY_CONTEXT_STACKS:
        setattr(graph, name, [])
    try:
        yield
    finally:
        for name, stack in saved.items():
            setattr(graph, name, stack)


def per_replica_components(value: tf.distribute.DistributedValues) -> tuple:
    """The per-device components of a distributed value (a Mirrored update result)."""
    return tuple(value.values)


def set_gpu_memory_fraction(fraction: float) -> None:
    """ConfigProto.gpu_options.per_process_gpu_memory_fraction for this process. TF 2 has no
    public setting for it; its eager context honours the field of its own ConfigProto when
    it creates the GPU devices. RuntimeError once they exist."""
    ctx = _context.context()
    if ctx._context_handle is not None:
        raise RuntimeError("The GPUs are already initialised.")
    config = tf.compat.v1.ConfigProto()
    if ctx._config is not None:
        config.CopyFrom(ctx._config)
    config.gpu_options.per_process_gpu_memory_fraction = fraction
    ctx._config = config


def in_multi_worker_mode(strategy: tf.distribute.Strategy) -> bool:
    return bool(strategy.extended._in_multi_worker_mode())


def iterator_type_spec(iterator: Any) -> tf.TypeSpec:
    """The type spec of an iterator; for a per-worker iterator (ParameterServerStrategy),
    one worker's (what a scheduled step receives)."""
    spec = iterator._type_spec
    if isinstance(spec, _coordinator_values.PerWorkerValuesTypeSpec):
        return spec._value_spec
    return spec


# -- TF1 hooks and savers ------------------------------------------------------------------
class SaverHookSettings(NamedTuple):
    """What a `tf.compat.v1.train.CheckpointSaverHook` was constructed with."""

    save_path: str
    save_steps: int | None
    save_secs: float | None
    listeners: list
    saver: Any
    scaffold: Any


def saver_hook_settings(hook: Any) -> SaverHookSettings:
    timer = hook._timer
    return SaverHookSettings(
        hook._save_path, timer._every_steps, timer._every_secs, list(hook._listeners),
        hook._saver, hook._scaffold,
    )  # fmt: skip


def saver_retention(saver: Any) -> tuple[int, float]:
    """`(max_to_keep, keep_checkpoint_every_n_hours)` of a `tf.compat.v1.train.Saver`."""
    return saver._max_to_keep, saver._keep_checkpoint_every_n_hours


def saveable_objects(var_list: dict) -> list:
    """The SaveableObjects `tf.compat.v1.train.Saver(var_list)` saves: their `specs` give
    each tensor's checkpoint name, slice and value (read when `spec.tensor` is read; None
    for an uninitialized variable)."""
    return _saveable_object_util.validate_and_slice_inputs(var_list)


def logs_at_end(hook: Any) -> bool:
    """A LoggingTensorHook(at_end=True) logs the last step's values in `end()`."""
    return isinstance(hook, _V1.train.LoggingTensorHook) and bool(hook._log_at_end)


def final_ops(hook: Any) -> Any:
    """A FinalOpsHook's final ops (run in `end()`), or None for other hooks."""
    return hook._final_ops if isinstance(hook, _V1.train.FinalOpsHook) else None


def resource_owner(handle: Any) -> Any:
    """The TrackableResource (e.g. a lookup table) a resource handle belongs to, or None:
    TensorFlow keeps a weak reference to it on the handle."""
    owner = getattr(handle, "_parent_trackable", None)
    owner = owner() if owner is not None else None
    return owner if isinstance(owner, _trackable_resource.CapturableResource) else None


# -- feature columns -----------------------------------------------------------------------
def feature_column_parse_spec(column: Any) -> dict:
    """One column's parse spec: `parse_example_spec` (v2), `_parse_example_spec` (a TF1
    `_FeatureColumn`, where that was its public name)."""
    spec = getattr(column, "parse_example_spec", None)
    return column._parse_example_spec if spec is None else spec


# -- SavedModel ----------------------------------------------------------------------------
@contextlib.contextmanager
def resources_created() -> Iterator[list]:
    """The TrackableResources (lookup tables and the like) made inside, in order.

    A table made while a tf.function is traced lives outside the trace (TensorFlow lifts
    it); a SavedModel of a function using it must track the table object itself.
    """
    tracker = _trackable_resource.ResourceTracker()
    created: list = []
    with _trackable_resource.resource_tracker_scope(tracker):
        yield created
    created.extend(tracker.resources)


def saved_model_fingerprint(path: str) -> bytes | None:
    """The fingerprint.pb content for the SavedModel at `path` (None on a TF without)."""
    try:
        from tensorflow.python.saved_model.pywrap_saved_model import fingerprinting
    except ImportError:  # pragma: no cover - a TF without fingerprints
        return None
    return fingerprinting.CreateFingerprintDef(path)


# -- TF1 RNN cells ----------------------------------------------------------------------------
def tf1_rnn_cell_module() -> Any:
    """TensorFlow's own TF1 RNN cells (`BasicLSTMCell`, `GRUCell`, `MultiRNNCell`, ...).

    `tf.compat.v1.nn.rnn_cell` forwards to tf_keras and is unavailable with Keras 3; the
    cells themselves still ship in TensorFlow's frozen legacy-Keras tree. Imported on first
    use (it loads that tree).
    """
    from tensorflow.python.keras.layers.legacy_rnn import rnn_cell_impl

    return rnn_cell_impl


def legacy_keras_package() -> Any:
    """`tensorflow.python.keras`: TensorFlow's frozen copy of tf.keras 2 (2.15-era code
    imported `models` / `layers` from there), already imported by TensorFlow itself."""
    import tensorflow.python.keras as legacy_keras

    return legacy_keras


def control_flow_ops_module() -> Any:
    """`tensorflow.python.ops.control_flow_ops`, where TF 1.x and tf-slim found `cond`, `case`
    and `while_loop` (TensorFlow 2.13+ moved them to modules of their own)."""
    from tensorflow.python.ops import control_flow_ops

    return control_flow_ops


def tf_keras_module() -> Any:
    """The module `tf.keras` stands for under Keras 3 (`tf.keras` is a lazy loader of it)."""
    import keras._tf_keras.keras as tf_keras

    return tf_keras


# tf.__internal__.feature_column: the feature-column base classes and helpers (StateManager,
# FeatureTransformationCache, (de)serialization) that DenseFeatures and the canned
# estimators build on; TensorFlow exports them only under __internal__.
feature_column_internals = tf.__internal__.feature_column


# -- SavedModel export helpers ------------------------------------------------------------
def saved_model_export_utils() -> Any:
    """`tensorflow.python.saved_model.model_utils`: TensorFlow's SavedModel export helpers
    (`EXPORT_TAG_MAP`, `SIGNATURE_KEY_MAP`, `get_timestamped_export_dir`, ...), which 2.15's
    `export.export_lib` re-exported and libraries read. Imported on first use."""
    from tensorflow.python.saved_model import model_utils

    return model_utils


def hook_tensors_accepting_variables() -> contextlib.AbstractContextManager:
    """Within it, TF's hooks take a variable where they take a tensor.

    `LoggingTensorHook({"step": tf.train.get_global_step(), "w": w})` resolves its tensors
    in begin() with `basic_session_run_hooks._as_graph_element`, which wants an object of
    the default graph; 2.15's variables were, ours live outside the traced step. Inside, a
    variable resolves to itself, and the hook runner reads it for the hook
    (hooks/runner.py `_variable_fetches`).
    """
    original = _basic_hooks._as_graph_element

    def as_graph_element(obj: Any) -> Any:
        if isinstance(obj, tf.Variable):
            return obj
        return original(obj)

    return patched(_basic_hooks, "_as_graph_element", as_graph_element)


class _TensorTag:
    """A tensor as a LoggingTensorHook tag: hashable and ordered by creation, printed as the
    tensor (2.15's graph tensors were their own tags; traced ones are unhashable)."""

    _made = itertools.count()

    def __init__(self, tensor: Any) -> None:
        self.tensor, self._order = tensor, next(self._made)

    def __str__(self) -> str:
        return str(self.tensor)

    __repr__ = __str__

    def __lt__(self, other: Any) -> bool:
        return self._order < getattr(other, "_order", -1)


def logging_hooks_taking_tensor_lists() -> contextlib.AbstractContextManager:
    """Within it, `LoggingTensorHook([t1, t2])` (a list of tensors, each its own tag) works
    in a traced step: TF's hook keys a dict by the tensors, which a traced graph's tensors
    refuse (unhashable); each becomes a `_TensorTag` instead."""
    hook = _V1.train.LoggingTensorHook
    original = hook.__init__

    def __init__(self: Any, tensors: Any, *args: Any, **kwargs: Any) -> None:
        if isinstance(tensors, list | tuple):
            tensors = {_TensorTag(t) if isinstance(t, tf.Tensor) else t: t for t in tensors}
        original(self, tensors, *args, **kwargs)

    return patched(hook, "__init__", __init__)


def op_seeds_chosen_by(
    choose: Callable[[Any], tuple[int, int]],
) -> contextlib.AbstractContextManager:
    """Within it, every TF random op built takes its (graph seed, op seed) from `choose(op_seed)`
    (`tensorflow.python.framework.random_seed.get_seed`, which every random op asks)."""
    from tensorflow.python.framework import random_seed

    return patched(random_seed, "get_seed", choose)


def tf1_switch_modules() -> list[Any]:
    """TensorFlow's private modules that define the TF1 switches, which code imports from
    there (`from tensorflow.python.framework.ops import disable_eager_execution`, EasyRec):
    `install()` answers the switch on them as on `tf.compat.v1`."""
    from tensorflow.python.compat import v2_compat
    from tensorflow.python.framework import ops, tensor_shape

    return [ops, v2_compat, tensor_shape]


class _VariableOpStandIn(NamedTuple):
    """What TF1 code reads of a variable's op (`v.op.name`), for a variable the engine
    made outside the traced graph."""

    name: str
    type: str = "VarHandleOp"


def initializers_of_traced_variables_only() -> contextlib.AbstractContextManager:
    """Within it, in a traced step, a variable made eagerly gives a no-op as its
    `initializer`, so `tf.compat.v1.variables_initializer` (and `global_variables_initializer`,
    `local_variables_initializer`, `Scaffold.default_local_init_op`) group only the
    initializers of the variables made in that graph.

    The engine's variables are made eagerly and initialised (or restored) by the engine;
    their initializer is None, on which TensorFlow's `group` fails. Patched on the variable
    class: TensorFlow's module wrappers each cache the public functions.
    """
    owner = _resource_variable_ops.BaseResourceVariable
    original = owner.__dict__["initializer"]

    def initializer(self: Any) -> Any:
        op = original.fget(self)
        if op is None and not tf.executing_eagerly():
            return tf.no_op(name="initialized_by_the_engine")
        return op

    return patched(owner, "initializer", property(initializer))


def variable_ops_in_traces() -> contextlib.AbstractContextManager:
    """Within it, TensorFlow's `moving_averages` reading `variable.op.name` of a variable
    made eagerly gets its TF1 op name (`dense/kernel`) instead of an error.

    The engine's variables live outside the traced step and are put in its
    GLOBAL_VARIABLES; `assign_moving_average(zero_debias=True)` (AdaNet's ensembles) names
    its own variables after theirs. Only that reader: TensorFlow's optimizers tell eager
    variables by `.op` raising (`optimizer._var_key`), so everywhere else it still does.
    """
    from tensorflow.python.ops import resource_variable_ops
    from tensorflow.python.training import moving_averages

    owner = resource_variable_ops.BaseResourceVariable
    original = owner.__dict__["op"]
    reader = moving_averages.__file__.rsplit(".", 1)[0]

    def op(self: Any) -> Any:
        try:
            return original.fget(self)
        except AttributeError:
            caller = sys._getframe(1).f_code.co_filename.rsplit(".", 1)[0]
            if tf.executing_eagerly() or caller != reader:
                raise
            return _VariableOpStandIn(self.name.split(":")[0])

    return patched(owner, "op", property(op))
