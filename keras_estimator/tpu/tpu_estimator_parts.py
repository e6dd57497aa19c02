"""The model_fn-side pieces of 2.15 TPUEstimator, working where they mean something off TPU.

- `ModelFnWrapper`: calls a TPUEstimator model_fn as TPUEstimator did on CPU (params with
  `batch_size` and `use_tpu`, a TPUEstimatorSpec turned into an EstimatorSpec); turning it
  into a TPU step raises (`tpu_only`);
- `OutfeedHostCall`: validates and runs `eval_metrics` / `host_call` on the host; the TPU
  outfeed side raises;
- `InputPipeline`: input structure recording; the infeed side raises;
- `CapturedObject`, `CapturingContext`, `CatchInvalidHostcallFunctions`, `get_scaffold`,
  `add_item_to_params`: small helpers, on public TensorFlow APIs;
- `ExportSavedModelApiVersion`, `BatchConfig`, `NotSaver`, and the graph helpers of
  TPUEstimator's loops (global / eval step, while loops over `iterations_per_loop` or
  stopping signals, export outputs as tensors, the inference computation of a model_fn,
  `export_estimator_savedmodel`).
"""

from __future__ import annotations

import collections
import copy
import enum
import logging
from typing import Any

import numpy as np
import tensorflow as tf

from keras_estimator.export.export_outputs import (
    ClassificationOutput,
    PredictOutput,
    RegressionOutput,
)
from keras_estimator.spec.estimator_spec import EstimatorSpec
from keras_estimator.tpu.tpu_context import TPUContext
from keras_estimator.tpu.tpu_estimator_spec import TPUEstimatorSpec, _validate_host_call
from keras_estimator.tpu.tpu_hooks import create_or_get_iterations_per_loop
from keras_estimator.tpu.tpu_inputs import InputsStructureRecorder, StopSignals
from keras_estimator.tpu.tpu_only import tpu_session_only
from keras_estimator.utils.fn_args import fn_args

logger = logging.getLogger("keras_estimator")

BATCH_SIZE_KEY = "batch_size"
CTX_KEY = "context"
USE_TPU_KEY = "use_tpu"
TPU_REPLICATE_ATTR = "_tpu_replicate"  # the attribute of ops inside a TPU computation
_USE_TPU_ESTIMATOR = (
    "hand the model_fn to keras_estimator.tpu.TPUEstimator (use_tpu=True runs it under a "
    "TPUStrategy, use_tpu=False on CPU/GPU) instead of building TPU steps yourself."
)


def add_item_to_params(params: Any, key: str, value: Any) -> None:
    """Sets `params[key] = value` (an HParams object through set_hparam / add_hparam)."""
    if hasattr(params, "set_hparam"):
        if key in params:
            params.set_hparam(key, value)
        else:
            params.add_hparam(key, value)
    else:
        params[key] = value


class CapturedObject:
    """Holds one Python object, captured once inside a function and read outside it.

    Example:
        >>> box = CapturedObject()
        >>> box.capture({"a": 1}); box.get()
        {'a': 1}
    """

    def __init__(self) -> None:
        self._object: Any = None
        self._captured = False

    def capture(self, o: Any) -> None:
        """Keeps `o`; a second capture is an error."""
        if self._captured:
            raise RuntimeError("This CapturedObject already captured an object; capture once.")
        self._captured = True
        self._object = o

    def get(self) -> Any:
        """The captured object (an error before capture)."""
        if not self._captured:
            raise RuntimeError("Nothing was captured yet. Fix: call capture(o) before get().")
        return self._object


class _NewOpsWatcher:
    """Enter / exit around graph building; `check(op)` is called for each op made inside."""

    def __init__(self) -> None:
        self._graph: tf.Graph | None = None
        self._start = 0

    def Enter(self) -> None:  # noqa: N802 - TensorFlow's control-flow-context method name
        if tf.executing_eagerly():
            self._graph = None
            return
        self._graph = tf.compat.v1.get_default_graph()
        self._start = len(self._graph.get_operations())

    def Exit(self) -> None:  # noqa: N802
        if self._graph is not None:
            for op in self._graph.get_operations()[self._start :]:
                self.AddOp(op)
        self._graph = None

    def AddOp(self, op: tf.Operation) -> None:  # noqa: N802
        raise NotImplementedError

    def AddValue(self, value: tf.Tensor) -> tf.Tensor:  # noqa: N802
        """Checks the op of `value`; returns `value`."""
        self.AddOp(value.op)
        return value

    def __enter__(self) -> _NewOpsWatcher:
        self.Enter()
        return self

    def __exit__(self, exception_type: Any, exception_value: Any, traceback: Any) -> None:
        if exception_type is None:
            self.Exit()
        else:
            self._graph = None


class CapturingContext(_NewOpsWatcher):
    """Refuses ops built inside it that read a tensor of a TPU computation (an op with
    the `_tpu_replicate` attribute): scaffold_fn and Scaffold.finalize run on the host.

    Args:
        message: Where the check is (starts the error message).

    Example:
        >>> with CapturingContext("Inside scaffold_fn"):
        ...     scaffold = scaffold_fn()
    """

    def __init__(self, message: str) -> None:
        super().__init__()
        self._message = message

    def AddOp(self, op: tf.Operation) -> None:  # noqa: N802
        """Raises ValueError if `op` reads a tensor of a TPU computation."""
        for tensor in op.inputs:
            if TPU_REPLICATE_ATTR in tensor.op.node_def.attr:
                raise ValueError(
                    f"{self._message}: Op {op.name} depends on TPU computation "
                    f"{tensor.name}, which is not allowed. Fix: build it from host tensors."
                )

    def to_control_flow_context_def(self, context_def: Any, export_scope: Any = None) -> None:
        """Nothing to serialise: the check leaves no trace in the graph."""


class CatchInvalidHostcallFunctions(_NewOpsWatcher):
    """Refuses TF1 summary ops (`tf.compat.v1.summary.*`) built inside a host_call.

    Use `Enter()` / `Exit()` (or `with`) around the host_call function.
    """

    _V1_SUMMARY_OPS = frozenset({
        "AudioSummary", "AudioSummaryV2", "HistogramSummary", "ImageSummary", "MergeSummary",
        "ScalarSummary", "TensorSummary", "TensorSummaryV2",
    })  # fmt: skip

    def AddOp(self, op: tf.Operation) -> None:  # noqa: N802
        if op.type in self._V1_SUMMARY_OPS:
            raise ValueError(
                f"A host_call built the TF1 summary op {op.name} ({op.type}). Expected TF2 "
                "summaries in host_calls. Fix: use tf.summary.scalar / histogram / image "
                "under a tf.summary.create_file_writer(...).as_default() instead of "
                "tf.compat.v1.summary."
            )

    def ExitResult(self, result: Any) -> None:  # noqa: N802
        """Nothing to do: the host_call's result needs no rewriting off TPU."""


def get_scaffold(captured_scaffold_fn: CapturedObject) -> Any:
    """Calls the captured scaffold_fn (if any) on the host and returns its Scaffold, whose
    `finalize` is checked to read no TPU tensor either.

    Raises:
        ValueError: If the scaffold_fn returns None.
    """
    scaffold = None
    with CapturingContext(message="Inside scaffold_fn"):
        scaffold_fn = captured_scaffold_fn.get()
        if scaffold_fn:
            scaffold = scaffold_fn()
            if scaffold is None:
                raise ValueError("TPUEstimatorSpec.scaffold_fn returns None, which is not allowed")
    if scaffold is not None:
        finalize = scaffold.finalize

        def checked_finalize() -> Any:
            with CapturingContext("Inside Scaffold.finalize"):
                return finalize()

        scaffold.finalize = checked_finalize
    return scaffold


class OutfeedHostCall:
    """`eval_metrics` and `host_call` of TPUEstimatorSpecs: validated, recorded, and run on
    the host (`create_cpu_hostcall`); sending them through the TPU outfeed raises.

    Args:
        ctx: The InternalTPUContext (with mode).
        outfeed_every_n_steps: Outfeed every this many steps.
    """

    def __init__(self, ctx: Any, outfeed_every_n_steps: int = 1) -> None:
        self._ctx = ctx
        self._outfeed_every_n_steps = outfeed_every_n_steps
        self._names: list[str] = []
        self._host_fns: dict[str, Any] = {}
        self._tensor_keys: dict[str, Any] = {}
        self._tensors: dict[str, list] = {}
        self._tensor_dtypes: dict[str, list] = {}
        self._tensor_shapes: dict[str, list] = {}

    @staticmethod
    def validate(host_calls: dict) -> None:
        """Each `(fn, tensors)`: fn callable, tensors a list (matching fn) or a dict."""
        for name, host_call in host_calls.items():
            _validate_host_call(name, host_call)

    @staticmethod
    def create_cpu_hostcall(host_calls: dict) -> dict:
        """`{name: fn(*tensors) or fn(**tensors)}`: the host calls run where they are."""
        OutfeedHostCall.validate(host_calls)
        results = {}
        for name, (fn, tensors) in host_calls.items():
            try:
                results[name] = fn(**tensors) if isinstance(tensors, dict) else fn(*tensors)
            except TypeError as exc:
                raise TypeError(
                    f"Calling {name}[0] with {name}[1] failed: {exc}. Expected the tensors to "
                    "match the function's arguments."
                ) from exc
        return results

    def record(self, host_calls: dict) -> None:
        """Records the functions and tensors (names, dtypes, shapes) of `host_calls`."""
        for name, (fn, tensors) in host_calls.items():
            self._names.append(name)
            self._host_fns[name] = fn
            if isinstance(tensors, dict):
                self._tensor_keys[name] = list(tensors)
                values = list(tensors.values())
            else:
                self._tensor_keys[name] = None
                values = list(tensors)
            self._tensors[name] = values
            self._tensor_dtypes[name] = [t.dtype for t in values]
            self._tensor_shapes[name] = [t.shape for t in values]

    def create_enqueue_op(self, step: Any = None) -> list:
        """[] without host calls; with some, the TPU outfeed enqueue (raises)."""
        if not self._names:
            return []
        raise tpu_session_only(
            "tpu_estimator._OutfeedHostCall.create_enqueue_op",
            "TPUEstimator's outfeed of host_call tensors",
            "return the host_call in a TPUEstimatorSpec and let TPUEstimator run it; or run "
            "the host calls where they are with _OutfeedHostCall.create_cpu_hostcall.",
        )

    def create_tpu_hostcall(self) -> dict:
        """{} without host calls; with some, the TPU outfeed dequeue (raises)."""
        if not self._names:
            return {}
        raise tpu_session_only(
            "tpu_estimator._OutfeedHostCall.create_tpu_hostcall",
            "TPUEstimator's outfeed dequeue of host_call tensors",
            "run the host calls with _OutfeedHostCall.create_cpu_hostcall, or return them "
            "in a TPUEstimatorSpec and let TPUEstimator run them.",
        )


class InputPipeline:
    """2.15's `_InputPipeline`: records the input structure (`InputsStructureRecorder`);
    building the TPU infeed from the input_fn raises.

    Args:
        input_fn: The input_fn.
        batch_axis: How tensors are split across shards.
        ctx: The InternalTPUContext (with mode).
    """

    InputsStructureRecorder = InputsStructureRecorder

    def __init__(self, input_fn: Any, batch_axis: Any, ctx: Any) -> None:
        self._inputs_structure_recorder = InputsStructureRecorder(ctx.input_partition_dims)
        self._sharded_per_core = ctx.is_input_sharded_per_core()
        self._input_fn = input_fn
        self._infeed_queue = None
        self._ctx = ctx
        self._batch_axis = batch_axis

    def generate_infeed_enqueue_ops_and_dequeue_fn(self) -> Any:
        raise tpu_session_only(
            "tpu_estimator._InputPipeline.generate_infeed_enqueue_ops_and_dequeue_fn",
            "TPUEstimator's infeed machinery",
            "pass the input_fn to TPUEstimator.train / evaluate / predict; under "
            "use_tpu=True its dataset is distributed by tf.distribute.TPUStrategy.",
        )

    def _validate_input_pipeline(self) -> None:
        """Warns when the graph holds queue runners (slow, not scalable input)."""
        if tf.compat.v1.get_default_graph().get_collection(tf.compat.v1.GraphKeys.QUEUE_RUNNERS):
            logger.warning(
                "Input pipeline contains one or more QueueRunners. It could be slow and not "
                "scalable. Please consider converting your input pipeline to use `tf.data`."
            )


class ModelFnWrapper:
    """Calls a TPUEstimator model_fn as TPUEstimator did: `call_without_tpu` runs it on the
    host (params get `batch_size` and `use_tpu`; a TPUEstimatorSpec becomes an
    EstimatorSpec). Turning it into TPU steps raises.

    Args:
        model_fn: The model_fn (must take `params`).
        config: The RunConfig it gets (copied per call).
        params: The params dict it gets (copied per call).
        ctx: The InternalTPUContext, entered for the mode.

    Example:
        >>> with internal_ctx.with_mode("train") as ctx:
        ...     spec = ModelFnWrapper(model_fn, config, {}, ctx).call_without_tpu(
        ...         features, labels, is_export_mode=False)
    """

    def __init__(self, model_fn: Any, config: Any, params: Any, ctx: Any) -> None:
        self._model_fn = model_fn
        self._config = config
        self._params = params
        self._ctx = ctx

    def call_without_tpu(self, features: Any, labels: Any, is_export_mode: bool) -> Any:
        """The model_fn's EstimatorSpec (a TPUEstimatorSpec converted) on the host."""
        return self._call_model_fn(features, labels, is_export_mode=is_export_mode)

    def _tpu_step(self, kind: str) -> NotImplementedError:
        return tpu_session_only(
            f"tpu_estimator._ModelFnWrapper.convert_to_single_tpu_{kind}_step",
            f"TPUEstimator's builder of one TPU {kind} step fed from the infeed",
            _USE_TPU_ESTIMATOR,
        )

    def convert_to_single_tpu_train_step(self, dequeue_fn: Any) -> Any:
        raise self._tpu_step("train")

    def convert_to_single_tpu_eval_step(self, dequeue_fn: Any) -> Any:
        raise self._tpu_step("eval")

    def convert_to_single_tpu_predict_step(self, dequeue_fn: Any) -> Any:
        raise self._tpu_step("predict")

    def _verify_tpu_spec_predictions(self, predictions: Any) -> dict:
        """Predictions must be a dict of tensors with a static batch size."""
        if not isinstance(predictions, dict):
            raise TypeError("TPUEstimatorSpec.predictions must be dict of Tensors.")
        for key, tensor in predictions.items():
            if tensor.shape.rank is None or tensor.shape[0] is None:
                raise ValueError(
                    f"The tensor with key ({key}) in TPUEstimatorSpec.predictions has dynamic "
                    f"shape (should be static). Tensor: {tensor}"
                )
        return predictions

    def _validate_model_features_and_labels(self, features: Any, labels: Any,
                                            is_export_mode: bool) -> None:  # fmt: skip
        """On TPU (not exporting), features and labels must have static shapes."""
        if is_export_mode or self._ctx.is_running_on_cpu(is_export_mode):
            return
        for name, value in (("features", features), ("labels", labels)):
            for tensor in tf.nest.flatten(value) if value is not None else []:
                if not tensor.shape.is_fully_defined():
                    raise ValueError(
                        f"The {name} to the model returned by input_fn must have static "
                        f"shape. Tensor: {tensor}"
                    )

    def _call_model_fn(self, features: Any, labels: Any, is_export_mode: bool = False) -> Any:
        self._validate_model_features_and_labels(features, labels, is_export_mode)
        model_fn_args = fn_args(self._model_fn)
        if "params" not in model_fn_args:
            raise ValueError(
                f"model_fn ({self._model_fn}) does not include params argument, required by "
                "TPUEstimator to pass batch size as params['batch_size']"
            )
        config = copy.deepcopy(self._config)
        params = copy.deepcopy(self._params)
        kwargs: dict[str, Any] = {}
        if "labels" in model_fn_args:
            kwargs["labels"] = labels
        elif labels is not None:
            raise ValueError("model_fn does not take labels, but input_fn returns labels.")
        if "mode" in model_fn_args:
            kwargs["mode"] = self._ctx.mode
        if "config" in model_fn_args:
            kwargs["config"] = config
        kwargs["params"] = params
        batch_size = None if is_export_mode else self._ctx.batch_size_for_model_fn
        if batch_size is not None:
            add_item_to_params(params, BATCH_SIZE_KEY, batch_size)
        on_cpu = self._ctx.is_running_on_cpu(is_export_mode)
        if not is_export_mode:
            add_item_to_params(params, USE_TPU_KEY, not on_cpu)
        if not on_cpu:
            add_item_to_params(
                params, CTX_KEY, TPUContext(internal_ctx=self._ctx, call_from_input_fn=False)
            )
        spec = self._model_fn(features=features, **kwargs)
        if on_cpu and isinstance(spec, TPUEstimatorSpec):
            return spec.as_estimator_spec()
        return spec

    def _verify_estimator_spec(self, estimator_spec: Any) -> Any:
        """A TPUEstimatorSpec passes; an EstimatorSpec may not carry training_chief_hooks."""
        if isinstance(estimator_spec, TPUEstimatorSpec):
            return estimator_spec
        if isinstance(estimator_spec, EstimatorSpec) and estimator_spec.training_chief_hooks:
            raise ValueError(
                "training_chief_hooks returned by EstimatorSpec is not supported in "
                "TPUEstimator. Fix: pass training hooks via training_hooks."
            )
        if getattr(estimator_spec, "scaffold", None):
            logger.warning(
                "EstimatorSpec.Scaffold is ignored by TPU train/eval. Use TPUEstimatorSpec."
            )
        return estimator_spec


class ExportSavedModelApiVersion(enum.Enum):
    """TPUEstimator's `export_saved_model_api_version`: V1 (TPUEstimator rewrote the
    model_fn for TPU inference) or V2 (the model_fn did, e.g. with inference_on_tpu).
    keras_estimator exports the CPU/GPU serving graph either way."""

    V1 = 1
    V2 = 2


class BatchConfig(
    collections.namedtuple(
        "BatchConfig",
        ["num_batch_threads", "max_batch_size", "batch_timeout_micros",
         "allowed_batch_sizes", "max_enqueued_batches"],
    )
):  # fmt: skip
    """Server-side batching settings of an exported TPU inference function.

    Args:
        num_batch_threads: Threads processing batches in parallel.
        max_batch_size: The largest batch.
        batch_timeout_micros: The longest wait before running an incomplete batch.
        allowed_batch_sizes: Batch sizes to pad up to (increasing, the last one
            `max_batch_size`), or None.
        max_enqueued_batches: The batch queue's depth.

    Example:
        >>> BatchConfig(4, 32, 5000, [8, 16, 32])
    """

    def __new__(
        cls,
        num_batch_threads: int,
        max_batch_size: int,
        batch_timeout_micros: int,
        allowed_batch_sizes: list | None,
        max_enqueued_batches: int = 100,
    ) -> BatchConfig:
        return super().__new__(
            cls, num_batch_threads, max_batch_size, batch_timeout_micros, allowed_batch_sizes,
            max_enqueued_batches,
        )  # fmt: skip


class NotSaver:
    """What to pass instead of a Saver to skip saving: `save()` only logs `message`.

    Args:
        message: What `save()` logs.
    """

    def __init__(self, message: str) -> None:
        self._message = message

    def save(self, *args: Any, **kwargs: Any) -> None:
        """Logs the message; saves nothing."""
        logger.info(self._message)


def is_iterable(obj: Any) -> bool:
    """Whether `iter(obj)` works."""
    try:
        iter(obj)
    except TypeError:
        return False
    return True


def create_global_step(graph: tf.Graph | None) -> tf.Variable:
    """A new int64 resource `global_step` variable in `graph` (the default one for None).

    Raises:
        ValueError: If the graph already has a global step.
    """
    graph = graph or tf.compat.v1.get_default_graph()
    if tf.compat.v1.train.get_global_step(graph) is not None:
        raise ValueError('"global_step" already exists.')
    with graph.as_default() as g, g.name_scope(None):
        return tf.compat.v1.get_variable(
            tf.compat.v1.GraphKeys.GLOBAL_STEP,
            shape=[],
            dtype=tf.int64,
            initializer=tf.compat.v1.initializers.zeros(),
            trainable=False,
            use_resource=True,
            collections=[
                tf.compat.v1.GraphKeys.GLOBAL_VARIABLES,
                tf.compat.v1.GraphKeys.GLOBAL_STEP,
            ],  # fmt: skip
        )


def sync_variables_ops(ctx: Any) -> list:
    """Ops checking every trainable variable for NaN/Inf (a no-op in BROADCAST mode)."""
    if ctx.is_input_broadcast_with_iterators():
        return [tf.no_op()]
    return [
        tf.debugging.check_numerics(v.read_value(), f"Gradient for {v.name} is NaN").op
        for v in tf.compat.v1.trainable_variables()
    ]


def get_or_create_eval_step() -> tf.Variable:
    """The graph's `eval_step` counter (GraphKeys.EVAL_STEP), made on first use."""
    graph = tf.compat.v1.get_default_graph()
    found = graph.get_collection(tf.compat.v1.GraphKeys.EVAL_STEP)
    if len(found) > 1:
        raise ValueError(f"The graph holds {len(found)} eval_step variables; expected one.")
    if found:
        return found[0]
    return tf.compat.v1.get_variable(
        "eval_step",
        shape=[],
        dtype=tf.int64,
        initializer=tf.compat.v1.initializers.zeros(),
        trainable=False,
        use_resource=True,
        collections=[tf.compat.v1.GraphKeys.LOCAL_VARIABLES, tf.compat.v1.GraphKeys.EVAL_STEP],
    )


def increase_eval_step_op(iterations_per_loop: Any) -> Any:
    """Adds `iterations_per_loop - 1` to the eval step (the loop adds the last one)."""
    eval_step = get_or_create_eval_step()
    return eval_step.assign_add(tf.cast(iterations_per_loop - 1, eval_step.dtype))


def wrap_computation_in_while_loop(device: Any, op_fn: Any) -> Any:
    """A while loop running `op_fn()`'s ops `iterations_per_loop` times, on `device`."""

    def body(i: tf.Tensor) -> tf.Tensor:
        with tf.control_dependencies(op_fn()):
            return i + 1

    iterations_per_loop = create_or_get_iterations_per_loop()
    with tf.compat.v1.device(device):
        iterations = tf.identity(iterations_per_loop)
        return tf.compat.v1.while_loop(
            lambda i: i < iterations, body, [tf.constant(0)], parallel_iterations=1
        )


def while_loop_until_stopping_signal(device: Any, op_fn: Any) -> Any:
    """A while loop running `op_fn()` (returning `{"ops", "signals"}`) until its signals
    say stop, on `device`."""

    def keep_going(scalar_stopping_signal: tf.Tensor) -> tf.Tensor:
        return tf.math.logical_not(StopSignals.should_stop(scalar_stopping_signal))

    def body(unused_scalar_stopping_signal: tf.Tensor) -> tf.Tensor:
        result = op_fn()
        with tf.control_dependencies(result["ops"]):
            return StopSignals.as_scalar_stopping_signal(result["signals"])

    with tf.compat.v1.device(device):
        return tf.compat.v1.while_loop(
            keep_going, body, [tf.constant(StopSignals.NON_STOPPING_SIGNAL)],
            parallel_iterations=1,
        )  # fmt: skip


def validate_tpu_training_graph(ctx: Any) -> None:
    """With TF1 control flow, training on several replicas needs a CrossShardOptimizer
    (a CrossReplicaSum op in the graph). Control flow v2 (TF2's) is not checked."""
    if tf.compat.v1.control_flow_v2_enabled():
        return
    operations = tf.compat.v1.get_default_graph().get_operations()
    if ctx.num_replicas > 1 and not any(o.type == "CrossReplicaSum" for o in operations):
        raise ValueError("CrossShardOptimizer must be used for model training on TPUs.")


ONE_GIGABYTE = 1024 * 1024 * 1024


def verify_cross_hosts_transfer_size(tensor_dict: dict, message: str) -> None:
    """Raises ValueError if the tensors together reach 1 GiB (the protobuf limit)."""
    total = 0
    for tensor in tensor_dict.values():
        total += int(np.prod(tensor.shape)) * tensor.dtype.size
    if total >= ONE_GIGABYTE:
        shapes = "\n".join(f" -- Key: {k}, Shape: {v.shape}" for k, v in tensor_dict.items())
        raise ValueError(
            f"{message} The transfer size is larger than the protobuf limit. Please consider "
            f"to use Tensors with smaller shapes or reduce batch size. Given:\n{shapes}"
        )


def check_add_preemption_hook(cluster: Any) -> bool:
    """Whether TPUEstimator would watch for preemption: a TPUClusterResolver whose Cloud
    TPU API is reachable."""
    if not isinstance(cluster, tf.distribute.cluster_resolver.TPUClusterResolver):
        return False
    client = getattr(cluster, "_cloud_tpu_client", None)
    try:
        return bool(client is not None and client.api_available())
    except Exception:  # noqa: BLE001 - any failure to ask means no preemption watch
        return False


def export_output_to_tensors(export_output: Any) -> list:
    """The tensors an export output holds (scores and classes; value; its outputs)."""
    if isinstance(export_output, ClassificationOutput):
        return [export_output.scores, export_output.classes]
    if isinstance(export_output, RegressionOutput):
        return [export_output.value]
    if isinstance(export_output, PredictOutput):
        return list(export_output.outputs.values())
    raise ValueError(
        "`export_output` must be have type `ClassificationOutput`, `RegressionOutput`, or "
        f"`PredictOutput`; got {export_output}."
    )


def clone_export_output_with_tensors(export_output: Any, tensors: list) -> Any:
    """An export output of the same kind as `export_output` holding `tensors`."""
    if isinstance(export_output, ClassificationOutput):
        if len(tensors) != 2:
            raise ValueError(f"tensors must be of length 2; got {len(tensors)}.")
        return ClassificationOutput(*tensors)
    if isinstance(export_output, RegressionOutput):
        if len(tensors) != 1:
            raise ValueError(f"tensors must be of length 1; got {len(tensors)}")
        return RegressionOutput(*tensors)
    if isinstance(export_output, PredictOutput):
        return PredictOutput(dict(zip(export_output.outputs.keys(), tensors)))
    raise ValueError(
        "`export_output` must be have type `ClassificationOutput`, `RegressionOutput`, or "
        f"`PredictOutput`; got {export_output}."
    )


KEY_WHEN_PREDICTIONS_IS_A_TENSOR = "_key_when_predictions_is_a_tensor"


def build_tpu_computation_for_inference(model_fn: Any, features: Any, labels: Any,
                                        config: Any, params: Any) -> tuple:  # fmt: skip
    """(computation, capture): `computation()` calls the model_fn in PREDICT and returns
    its prediction tensors followed by its export outputs' tensors (Nones left out);
    `capture.get()` then holds (spec, export outputs as tensors, the flat list with Nones,
    predictions dict)."""
    capture = CapturedObject()

    def computation() -> list:
        model_fn_args = fn_args(model_fn)
        kwargs = {}
        for name, value in (("labels", labels), ("mode", "infer"), ("config", config),
                            ("params", params)):  # fmt: skip
            if name in model_fn_args:
                kwargs[name] = value
        spec = model_fn(features, **kwargs)
        export_outputs = collections.OrderedDict(
            (key, export_output_to_tensors(value))
            for key, value in (spec.export_outputs or {}).items()
        )
        export_list = tf.nest.flatten(export_outputs)
        predictions: dict[str, Any]
        if isinstance(spec.predictions, dict):
            predictions = collections.OrderedDict(spec.predictions.items())
        else:
            predictions = {KEY_WHEN_PREDICTIONS_IS_A_TENSOR: spec.predictions}
        capture.capture((spec, export_outputs, export_list, predictions))
        return tf.nest.flatten(predictions) + [t for t in export_list if t is not None]

    return computation, capture


def export_estimator_savedmodel(
    estimator: Any,
    export_dir_base: Any,
    serving_input_receiver_fn: Any,
    assets_extra: dict | None = None,
    as_text: bool = False,
    checkpoint_path: str | None = None,
) -> bytes:
    """Exports a trained Estimator's model_fn as TPUEstimator would for serving.

    2.15 wrote a TPU inference graph; keras_estimator writes the CPU/GPU serving graph
    (through a `TPUEstimator(use_tpu=False)` on the same model_dir and params), as
    TPUEstimator.export_saved_model does. The model_fn must take `params`.

    Returns:
        The export directory (bytes).
    """
    from keras_estimator.tpu.tpu_config import RunConfig
    from keras_estimator.tpu.tpu_estimator import TPUEstimator

    tpu_estimator = TPUEstimator(
        estimator._model_fn,
        config=RunConfig(model_dir=estimator.model_dir),
        params=estimator.params,
        use_tpu=False,
        train_batch_size=2048,  # not used by an export
        eval_batch_size=2048,
        eval_on_tpu=False,
        export_to_tpu=False,
    )
    return tpu_estimator.export_saved_model(
        export_dir_base, serving_input_receiver_fn, assets_extra=assets_extra,
        as_text=as_text, checkpoint_path=checkpoint_path,
    )  # fmt: skip
