"""2.15's `tpu.tpu_estimator`: TPUEstimator, TPUEstimatorSpec and TPUEstimator's parts.

`TPUEstimator` and `TPUEstimatorSpec` are keras_estimator's (`tf.compat.v1.estimator.tpu`'s
classes). The parts libraries used are working objects where their meaning holds off TPU:
the hooks (`ExamplesPerSecondHook`, `InstallSignalHandlerHook`, `_TPUStopAtStepHook`,
`_SetEvalIterationsHook`, `_StoppingPredictHook`, `_OutfeedHostCallHook`) run on
keras_estimator's hook loop; the signals and inputs (`_StopSignals`, `_PaddingSignals`,
`_Inputs`, `_InputsWithStoppingSignals`, `TensorPacker`) are plain TensorFlow ops;
`_ModelFnWrapper.call_without_tpu`, `_OutfeedHostCall.create_cpu_hostcall`,
`_CapturedObject`, `_CapturingContext`, `_OpQueueContext`, `_SIGNAL`, `PeriodicLogger`,
`BatchConfig`, `ExportSavedModelApiVersion`, `_NotSaver` and the graph helpers
(`_create_global_step`, `_create_or_get_iterations_per_loop`,
`_wrap_computation_in_while_loop`, `_export_output_to_tensors`, ...) work as in 2.15.
`export_estimator_savedmodel` exports the CPU/GPU serving graph (2.15 wrote a TPU one).

Raising a clear NotImplementedError when used: 2.15's own TPU program, which runs only
inside a TF1 session on a TPU (keras_estimator runs TPUEstimator through tf.distribute):

- `TPUInfeedOutfeedSessionHook`, `TPUInfeedOutfeedSessionHookForPrediction` (made);
- `generate_per_core_enqueue_ops_fn_for_host`, `generate_per_host_enqueue_ops_fn_for_host`,
  `generate_per_host_v2_enqueue_ops_fn_for_host`, `generate_broadcast_enqueue_ops_fn`,
  `_InputPipeline.generate_infeed_enqueue_ops_and_dequeue_fn` (the infeed);
- `_OutfeedHostCall.create_enqueue_op` / `create_tpu_hostcall` with host calls (outfeed);
- `_train_on_tpu_system`, `_eval_on_tpu_system`, `_predict_on_tpu_system`,
  `_ModelFnWrapper.convert_to_single_tpu_{train,eval,predict}_step` (tpu.shard loops);
- `call_computation`, `inference_on_tpu`, `model_fn_inference_on_tpu`,
  `_build_computation_for_inference` (TPUPartitionedCall inference).
"""

from __future__ import annotations

from typing import Any

import tensorflow as tf

from keras_estimator.tpu.loop_control import SIGNAL as _SIGNAL
from keras_estimator.tpu.loop_control import OpQueueContext as _OpQueueContext
from keras_estimator.tpu.loop_control import (
    OpSignalOnceQueueContext as _OpSignalOnceQueueContext,
)
from keras_estimator.tpu.loop_control import PeriodicLogger
from keras_estimator.tpu.tpu_estimator import RESERVED_PARAMS_KEYS as _RESERVED_PARAMS_KEYS
from keras_estimator.tpu.tpu_estimator import TPUEstimator
from keras_estimator.tpu.tpu_estimator_parts import BATCH_SIZE_KEY as _BATCH_SIZE_KEY
from keras_estimator.tpu.tpu_estimator_parts import CTX_KEY as _CTX_KEY
from keras_estimator.tpu.tpu_estimator_parts import (
    KEY_WHEN_PREDICTIONS_IS_A_TENSOR as _KEY_WHEN_PREDICTIONS_IS_A_TENSOR,
)
from keras_estimator.tpu.tpu_estimator_parts import ONE_GIGABYTE as _ONE_GIGABYTE
from keras_estimator.tpu.tpu_estimator_parts import USE_TPU_KEY as _USE_TPU_KEY
from keras_estimator.tpu.tpu_estimator_parts import (
    BatchConfig,
    CatchInvalidHostcallFunctions,
    ExportSavedModelApiVersion,
    export_estimator_savedmodel,
)
from keras_estimator.tpu.tpu_estimator_parts import CapturedObject as _CapturedObject
from keras_estimator.tpu.tpu_estimator_parts import CapturingContext as _CapturingContext
from keras_estimator.tpu.tpu_estimator_parts import InputPipeline as _InputPipeline
from keras_estimator.tpu.tpu_estimator_parts import ModelFnWrapper as _ModelFnWrapper
from keras_estimator.tpu.tpu_estimator_parts import NotSaver as _NotSaver
from keras_estimator.tpu.tpu_estimator_parts import OutfeedHostCall as _OutfeedHostCall
from keras_estimator.tpu.tpu_estimator_parts import add_item_to_params as _add_item_to_params
from keras_estimator.tpu.tpu_estimator_parts import (
    build_tpu_computation_for_inference as _build_tpu_computation_for_inference,
)
from keras_estimator.tpu.tpu_estimator_parts import (
    check_add_preemption_hook as _check_add_preemption_hook,
)
from keras_estimator.tpu.tpu_estimator_parts import (
    clone_export_output_with_tensors as _clone_export_output_with_tensors,
)
from keras_estimator.tpu.tpu_estimator_parts import create_global_step as _create_global_step
from keras_estimator.tpu.tpu_estimator_parts import (
    export_output_to_tensors as _export_output_to_tensors,
)
from keras_estimator.tpu.tpu_estimator_parts import get_scaffold as _get_scaffold
from keras_estimator.tpu.tpu_estimator_parts import (
    increase_eval_step_op as _increase_eval_step_op,
)
from keras_estimator.tpu.tpu_estimator_parts import is_iterable as _is_iterable
from keras_estimator.tpu.tpu_estimator_parts import sync_variables_ops as _sync_variables_ops
from keras_estimator.tpu.tpu_estimator_parts import (
    validate_tpu_training_graph as _validate_tpu_training_graph,
)
from keras_estimator.tpu.tpu_estimator_parts import (
    verify_cross_hosts_transfer_size as _verify_cross_hosts_transfer_size,
)
from keras_estimator.tpu.tpu_estimator_parts import (
    while_loop_until_stopping_signal as _wrap_computation_in_while_loop_with_stopping_signals,
)
from keras_estimator.tpu.tpu_estimator_parts import (
    wrap_computation_in_while_loop as _wrap_computation_in_while_loop,
)
from keras_estimator.tpu.tpu_estimator_spec import TPUEstimatorSpec
from keras_estimator.tpu.tpu_hooks import ITERATIONS_PER_LOOP_VAR as _ITERATIONS_PER_LOOP_VAR
from keras_estimator.tpu.tpu_hooks import TPU_ESTIMATOR as _TPU_ESTIMATOR
from keras_estimator.tpu.tpu_hooks import (
    ExamplesPerSecondHook,
    InstallSignalHandlerHook,
)
from keras_estimator.tpu.tpu_hooks import OutfeedHostCallHook as _OutfeedHostCallHook
from keras_estimator.tpu.tpu_hooks import SetEvalIterationsHook as _SetEvalIterationsHook
from keras_estimator.tpu.tpu_hooks import StoppingPredictHook as _StoppingPredictHook
from keras_estimator.tpu.tpu_hooks import TPUStopAtStepHook as _TPUStopAtStepHook
from keras_estimator.tpu.tpu_hooks import (
    create_or_get_iterations_per_loop as _create_or_get_iterations_per_loop,
)
from keras_estimator.tpu.tpu_inputs import (
    TENSOR_PACKER_KEY as _TENSOR_PACKER_CONCATENATED_SMALL_FEATURES_KEY,
)
from keras_estimator.tpu.tpu_inputs import (
    TENSOR_PACKER_MIN_GROUP_SIZE as _TENSOR_PACKER_MINIMUM_NUM_SMALL_FEATURES_TO_GROUP,
)
from keras_estimator.tpu.tpu_inputs import (
    TENSOR_PACKER_SMALL_FEATURE_DIM_SIZE as _TENSOR_PACKER_SMALL_FEATURE_DIM_SIZE,
)
from keras_estimator.tpu.tpu_inputs import Inputs as _Inputs
from keras_estimator.tpu.tpu_inputs import (
    InputsWithStoppingSignals as _InputsWithStoppingSignals,
)
from keras_estimator.tpu.tpu_inputs import PaddingSignals as _PaddingSignals
from keras_estimator.tpu.tpu_inputs import StopSignals as _StopSignals
from keras_estimator.tpu.tpu_inputs import TensorPacker
from keras_estimator.tpu.tpu_inputs import extract_key_names as _extract_key_names
from keras_estimator.tpu.tpu_only import session_only_function, tpu_session_only

_INITIAL_LOSS = 1e7
_ZERO_LOSS = 0.0
_CROSS_REPLICA_SUM_OP = "CrossReplicaSum"
_TPU_ENQUEUE_OPS = "_tpu_enqueue_ops"
_TPU_TRAIN_OP = "_tpu_train_op"
_INFERENCE_ON_TPU_MODE = "_inference_on_tpu"
_WRAP_INPUT_FN_INTO_WHILE_LOOP = False

_USE_TPU_ESTIMATOR = (
    "hand the model_fn and input_fn to TPUEstimator (use_tpu=True trains under a "
    "tf.distribute.TPUStrategy; use_tpu=False runs on CPU/GPU) instead of building the TPU "
    "program yourself."
)
_EXPORT_INSTEAD = (
    "export with TPUEstimator.export_saved_model (or Estimator.export_saved_model), which "
    "writes the CPU/GPU serving graph; for TPU serving, export a Keras model under "
    "tf.distribute.TPUStrategy."
)


class TPUInfeedOutfeedSessionHook(tf.compat.v1.train.SessionRunHook):
    """Not provided: 2.15's hook that initialised the TPU system and ran the infeed and
    outfeed threads beside the TF1 session. Making one raises NotImplementedError."""

    def __init__(self, ctx: Any, enqueue_ops: Any, dequeue_ops: Any, tpu_compile_op: Any,
                 *args: Any, **kwargs: Any) -> None:  # fmt: skip
        raise tpu_session_only(
            f"tpu_estimator.{type(self).__name__}",
            "TPUEstimator's infeed/outfeed session hook (it fed the TPU from threads "
            "running session.run on enqueue and dequeue ops)",
            _USE_TPU_ESTIMATOR,
        )


class TPUInfeedOutfeedSessionHookForPrediction(TPUInfeedOutfeedSessionHook):
    """Not provided: the prediction variant of `TPUInfeedOutfeedSessionHook`. Making one
    raises NotImplementedError."""


generate_per_core_enqueue_ops_fn_for_host = session_only_function(
    "tpu_estimator.generate_per_core_enqueue_ops_fn_for_host",
    "TPUEstimator's infeed machinery (per-core enqueue ops)",
    _USE_TPU_ESTIMATOR,
)
generate_per_host_enqueue_ops_fn_for_host = session_only_function(
    "tpu_estimator.generate_per_host_enqueue_ops_fn_for_host",
    "TPUEstimator's infeed machinery (per-host enqueue ops)",
    _USE_TPU_ESTIMATOR,
)
generate_per_host_v2_enqueue_ops_fn_for_host = session_only_function(
    "tpu_estimator.generate_per_host_v2_enqueue_ops_fn_for_host",
    "TPUEstimator's infeed machinery (per-host v2 enqueue ops)",
    _USE_TPU_ESTIMATOR,
)
generate_broadcast_enqueue_ops_fn = session_only_function(
    "tpu_estimator.generate_broadcast_enqueue_ops_fn",
    "TPUEstimator's infeed machinery (broadcast enqueue ops)",
    _USE_TPU_ESTIMATOR,
)
_train_on_tpu_system = session_only_function(
    "tpu_estimator._train_on_tpu_system",
    "TPUEstimator's TPU training loop (tpu.split_compile_and_shard over the infeed)",
    _USE_TPU_ESTIMATOR,
)
_eval_on_tpu_system = session_only_function(
    "tpu_estimator._eval_on_tpu_system",
    "TPUEstimator's TPU evaluation loop (tpu.split_compile_and_shard over the infeed)",
    _USE_TPU_ESTIMATOR,
)
_predict_on_tpu_system = session_only_function(
    "tpu_estimator._predict_on_tpu_system",
    "TPUEstimator's TPU prediction loop (tpu.split_compile_and_shard over the infeed)",
    _USE_TPU_ESTIMATOR,
)
call_computation = session_only_function(
    "tpu_estimator.call_computation",
    "TPUEstimator's TPU inference call (TPUPartitionedCall, optionally batched)",
    _EXPORT_INSTEAD,
)
inference_on_tpu = session_only_function(
    "tpu_estimator.inference_on_tpu",
    "TPUEstimator's TPU inference wrapper (tpu.rewrite inside TPUPartitionedCall)",
    _EXPORT_INSTEAD,
)
model_fn_inference_on_tpu = session_only_function(
    "tpu_estimator.model_fn_inference_on_tpu",
    "TPUEstimator's export API v2 helper running a model_fn through TPUPartitionedCall",
    _EXPORT_INSTEAD,
)
_build_computation_for_inference = session_only_function(
    "tpu_estimator._build_computation_for_inference",
    "TPUEstimator's builder of a tpu.rewrite inference computation",
    _EXPORT_INSTEAD + " (_build_tpu_computation_for_inference builds the model_fn's "
    "inference computation without the TPU rewrite.)",
)

__all__ = [
    "BatchConfig",
    "CatchInvalidHostcallFunctions",
    "ExamplesPerSecondHook",
    "ExportSavedModelApiVersion",
    "InstallSignalHandlerHook",
    "PeriodicLogger",
    "TPUEstimator",
    "TPUEstimatorSpec",
    "TPUInfeedOutfeedSessionHook",
    "TPUInfeedOutfeedSessionHookForPrediction",
    "TensorPacker",
    "call_computation",
    "export_estimator_savedmodel",
    "generate_broadcast_enqueue_ops_fn",
    "generate_per_core_enqueue_ops_fn_for_host",
    "generate_per_host_enqueue_ops_fn_for_host",
    "generate_per_host_v2_enqueue_ops_fn_for_host",
    "inference_on_tpu",
    "model_fn_inference_on_tpu",
    "_BATCH_SIZE_KEY",
    "_CROSS_REPLICA_SUM_OP",
    "_CTX_KEY",
    "_CapturedObject",
    "_CapturingContext",
    "_INFERENCE_ON_TPU_MODE",
    "_INITIAL_LOSS",
    "_ITERATIONS_PER_LOOP_VAR",
    "_InputPipeline",
    "_Inputs",
    "_InputsWithStoppingSignals",
    "_KEY_WHEN_PREDICTIONS_IS_A_TENSOR",
    "_ModelFnWrapper",
    "_NotSaver",
    "_ONE_GIGABYTE",
    "_OpQueueContext",
    "_OpSignalOnceQueueContext",
    "_OutfeedHostCall",
    "_OutfeedHostCallHook",
    "_PaddingSignals",
    "_RESERVED_PARAMS_KEYS",
    "_SIGNAL",
    "_SetEvalIterationsHook",
    "_StopSignals",
    "_StoppingPredictHook",
    "_TENSOR_PACKER_CONCATENATED_SMALL_FEATURES_KEY",
    "_TENSOR_PACKER_MINIMUM_NUM_SMALL_FEATURES_TO_GROUP",
    "_TENSOR_PACKER_SMALL_FEATURE_DIM_SIZE",
    "_TPUStopAtStepHook",
    "_TPU_ENQUEUE_OPS",
    "_TPU_ESTIMATOR",
    "_TPU_TRAIN_OP",
    "_USE_TPU_KEY",
    "_WRAP_INPUT_FN_INTO_WHILE_LOOP",
    "_ZERO_LOSS",
    "_add_item_to_params",
    "_build_computation_for_inference",
    "_build_tpu_computation_for_inference",
    "_check_add_preemption_hook",
    "_clone_export_output_with_tensors",
    "_create_global_step",
    "_create_or_get_iterations_per_loop",
    "_eval_on_tpu_system",
    "_export_output_to_tensors",
    "_extract_key_names",
    "_get_scaffold",
    "_increase_eval_step_op",
    "_is_iterable",
    "_predict_on_tpu_system",
    "_sync_variables_ops",
    "_train_on_tpu_system",
    "_validate_tpu_training_graph",
    "_verify_cross_hosts_transfer_size",
    "_wrap_computation_in_while_loop",
    "_wrap_computation_in_while_loop_with_stopping_signals",
]
