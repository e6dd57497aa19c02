"""TPUContext: what TPUEstimator told input_fns and model_fns about the TPU system.

`InternalTPUContext` holds a `tpu.RunConfig`, the three batch sizes and `use_tpu`, and
answers what 2.15's `_InternalTPUContext` answered: how many replicas and hosts, the batch
size an input_fn or model_fn gets in each mode, the host and TPU device names, whether a
mode runs on CPU. The TPU system it describes is:

- with `use_tpu=False` (CPU/GPU): this one host, with `TPUConfig.num_shards` cores (one when
  unset), each one replica; nothing is queried;
- with `use_tpu=True`: the TPU of `tpu.RunConfig` (its `cluster` or `master`), whose
  `TPUSystemMetadata` is asked for once per master address and kept.

`OneCoreTPUContext` is the one-core system 2.15 used for `TPUConfig(num_shards=1)`.
"""

from __future__ import annotations

import contextlib
import copy
import logging
from collections.abc import Callable, Iterator
from typing import Any

import tensorflow as tf

from keras_estimator.spec.mode_keys import ModeKeys
from keras_estimator.tpu.tpu_config import InputPipelineConfig
from keras_estimator.tpu.tpu_strategy import tpu_resolver

logger = logging.getLogger("keras_estimator")

DEFAULT_JOB_NAME = "tpu_worker"
DEFAULT_COORDINATOR_JOB_NAME = "coordinator"
LOCAL_MASTERS = ("", "local")
# Cores per replica -> the TPU mesh shape a replica takes (model parallelism).
NUM_CORES_TO_COMPUTATION_SHAPE = {
    1: [1, 1, 1, 1],
    2: [1, 1, 1, 2],
    4: [1, 2, 1, 2],
    8: [2, 2, 1, 2],
    16: [4, 2, 1, 2],
    32: [4, 4, 1, 2],
    64: [8, 4, 1, 2],
    128: [8, 8, 1, 2],
}


def master_job(master: str | None, cluster_def: Any) -> str | None:
    """The job that TPU computations are placed on, as TPUEstimator inferred it.

    Args:
        master: The TensorFlow master address ("" or "local" for in-process).
        cluster_def: The `ClusterDef` of the session config, or None.

    Returns:
        None for a local master, else the job name.

    Raises:
        ValueError: If the job cannot be inferred from `cluster_def`.
    """
    if master in LOCAL_MASTERS or master is None:
        return None
    if not cluster_def or not cluster_def.job:
        return DEFAULT_JOB_NAME
    names = {job.name for job in cluster_def.job}
    if DEFAULT_JOB_NAME in names:
        raise ValueError(
            f"The cluster names a job {DEFAULT_JOB_NAME!r}, which TPUEstimator reserved. "
            "Expected other job names. Fix: rename that job, or set TPUConfig(tpu_job_name=...)."
        )
    names.discard(DEFAULT_COORDINATOR_JOB_NAME)
    if len(names) == 1:
        return names.pop()
    raise ValueError(
        f"Could not infer the TPU job from the cluster's jobs {sorted(names)}. Expected one "
        "job (besides 'coordinator'). Fix: set TPUConfig(tpu_job_name=...)."
    )


class InternalTPUContext:
    """The immutable TPU state of a TPUEstimator, as 2.15's `_InternalTPUContext`.

    Mode-dependent answers need a mode: `with ctx.with_mode(mode) as ctx: ...`.

    Args:
        config: A `tpu.RunConfig`.
        train_batch_size: The global training batch size (or None).
        eval_batch_size: The global evaluation batch size (or None).
        predict_batch_size: The global prediction batch size (or None).
        use_tpu: Whether the TPU runs the model (False: CPU/GPU).
        eval_on_tpu: Whether evaluation runs on the TPU (when use_tpu).
        embedding_config_spec: TPU embeddings (not supported; None).

    Example:
        >>> ctx = InternalTPUContext(RunConfig(tpu_config=TPUConfig(num_shards=8)), 64, 16,
        ...                          16, use_tpu=False)
        >>> with ctx.with_mode("train") as train_ctx:
        ...     train_ctx.num_replicas, train_ctx.batch_size_for_input_fn
        (8, 64)
    """

    def __init__(
        self,
        config: Any,
        train_batch_size: int | None,
        eval_batch_size: int | None,
        predict_batch_size: int | None,
        use_tpu: bool,
        eval_on_tpu: bool = True,
        embedding_config_spec: Any = None,
    ) -> None:
        self._config = config
        self._train_batch_size = train_batch_size
        self._eval_batch_size = eval_batch_size
        self._predict_batch_size = predict_batch_size
        self._use_tpu = bool(use_tpu)
        if not use_tpu and eval_on_tpu:
            logger.info("eval_on_tpu ignored because use_tpu is False.")
        self._eval_on_tpu = eval_on_tpu
        cores_per_replica = config.tpu_config.num_cores_per_replica
        self._model_parallelism_enabled = bool(use_tpu and cores_per_replica)
        self._computation_shape = (
            NUM_CORES_TO_COMPUTATION_SHAPE[cores_per_replica]
            if self._model_parallelism_enabled
            else None
        )
        self._mode: str | None = None
        # Shared by the copies with_mode() makes: they hold facts of the process's lifetime.
        self._lazy_tpu_system_metadata_dict: dict = {}
        self._lazy_device_assignment_dict: dict = {}
        self._lazy_validation_dict: dict = {}
        self._embedding_config_spec = embedding_config_spec
        self._lazy_embedding_config_dict: dict = {}

    # -- mode ---------------------------------------------------------------------------
    def _assert_mode(self) -> str:
        if self._mode is None:
            raise RuntimeError(
                "This TPU context has no mode. Expected it to be entered for a mode. Fix: "
                "`with ctx.with_mode(mode) as ctx:` before asking mode-dependent questions."
            )
        return self._mode

    @contextlib.contextmanager
    def with_mode(self, mode: str) -> Iterator[InternalTPUContext]:
        """A copy of this context for `mode` (sharing what was learned about the system)."""
        new = copy.copy(self)
        new._mode = mode
        yield new

    @property
    def mode(self) -> str:
        return self._assert_mode()

    @property
    def config(self) -> Any:
        return self._config

    # -- the TPU system -----------------------------------------------------------------
    def _get_master_address(self) -> str:
        mode = self._assert_mode()
        config = self._config
        return config.evaluation_master if mode == ModeKeys.EVAL else config.master

    def _off_tpu_system_metadata(self) -> Any:
        cores = self._config.tpu_config.num_shards or 1
        return tf.tpu.experimental.TPUSystemMetadata(
            num_cores=cores, num_hosts=1, num_of_cores_per_host=cores, topology=None, devices=[]
        )

    def _get_tpu_system_metadata(self) -> Any:
        """The TPUSystemMetadata of the system (see the module docstring), kept per master."""
        master = self._get_master_address() if self._mode is not None else self._config.master
        metadata = self._lazy_tpu_system_metadata_dict.get(master)
        if metadata is not None:
            return metadata
        if not self._use_tpu:
            metadata = self._off_tpu_system_metadata()
        else:
            resolver = tpu_resolver(self._config)
            try:
                metadata = resolver.get_tpu_system_metadata()
            except (tf.errors.OpError, ValueError, RuntimeError) as exc:
                raise RuntimeError(
                    f"Could not read the TPU system of {master!r}: {exc}. Expected a "
                    "reachable TPU for use_tpu=True. Fix: check the TPU name or address of "
                    "tpu.RunConfig(cluster=...), or use use_tpu=False for CPU/GPU."
                ) from exc
        self._lazy_tpu_system_metadata_dict[master] = metadata
        return metadata

    def _get_device_assignment(self) -> Any:
        master = self._get_master_address()
        assignment = self._lazy_device_assignment_dict.get(master)
        if assignment is None:
            metadata = self._get_tpu_system_metadata()
            assignment = tf.tpu.experimental.DeviceAssignment.build(
                metadata.topology,
                computation_shape=self._computation_shape,
                num_replicas=self.num_replicas,
            )
            self._lazy_device_assignment_dict[master] = assignment
        return assignment

    @property
    def model_parallelism_enabled(self) -> bool:
        return self._model_parallelism_enabled

    @property
    def device_assignment(self) -> Any:
        """The TPU DeviceAssignment under model parallelism, else None."""
        return self._get_device_assignment() if self._model_parallelism_enabled else None

    @property
    def num_cores(self) -> int:
        return self._get_tpu_system_metadata().num_cores

    @property
    def num_hosts(self) -> int:
        return self._get_tpu_system_metadata().num_hosts

    @property
    def num_of_cores_per_host(self) -> int:
        return self._get_tpu_system_metadata().num_of_cores_per_host

    @property
    def num_replicas(self) -> int:
        """Cores in the system, divided by the cores of one replica under model parallelism."""
        cores = self.num_cores
        if not self._model_parallelism_enabled:
            return cores
        per_replica = self._config.tpu_config.num_cores_per_replica
        if per_replica > cores or cores % per_replica:
            raise ValueError(
                f"TPUConfig.num_cores_per_replica ({per_replica}) must divide the TPU cores "
                f"in the system ({cores}). Fix: choose num_cores_per_replica accordingly."
            )
        return cores // per_replica

    @property
    def num_of_replicas_per_host(self) -> int:
        if self._model_parallelism_enabled:
            return self.num_replicas // self.num_hosts  # 0 when a replica spans hosts
        return self.num_of_cores_per_host

    # -- TPUConfig facts ----------------------------------------------------------------
    @property
    def input_partition_dims(self) -> Any:
        return self._config.tpu_config.input_partition_dims

    @property
    def allow_per_host_v2_parallel_get_next(self) -> bool:
        return self._config.tpu_config.experimental_allow_per_host_v2_parallel_get_next

    @property
    def feed_hook(self) -> Any:
        return self._config.tpu_config.experimental_feed_hook

    @property
    def tensor_core_embedding_columns(self) -> Any:
        spec = self._embedding_config_spec
        return getattr(spec, "tensor_core_feature_columns", None) if spec else None

    @property
    def embedding_config(self) -> Any:
        """The TPU embedding config (None: keras_estimator has no TPU embeddings)."""
        if self._use_tpu and self._embedding_config_spec:
            from keras_estimator.tpu.embedding_configs import EmbeddingConfig

            # Raises, saying what to use instead.
            EmbeddingConfig(self._embedding_config_spec, self._train_batch_size,
                            self._eval_batch_size, None, None, self._config)  # fmt: skip
        return None

    def is_input_sharded_per_core(self) -> bool:
        """Whether input_fn ran once per core (training with PER_SHARD_V1)."""
        mode = self._assert_mode()
        return (
            mode == ModeKeys.TRAIN
            and self._config.tpu_config.per_host_input_for_training
            == InputPipelineConfig.PER_SHARD_V1
        )

    def is_input_per_host_with_iterators(self) -> bool:
        return (
            self._config.tpu_config.per_host_input_for_training == InputPipelineConfig.PER_HOST_V2
        )

    def is_input_broadcast_with_iterators(self) -> bool:
        return (
            self._config.tpu_config.per_host_input_for_training == InputPipelineConfig.BROADCAST
            or self.is_input_slice_broadcast_to_all_cores()
        )

    def is_input_slice_broadcast_to_all_cores(self) -> bool:
        mode = self._assert_mode()
        return (
            mode != ModeKeys.TRAIN
            and self._config.tpu_config.eval_training_input_configuration
            == InputPipelineConfig.SLICED
        )

    def is_replica_across_hosts(self) -> bool:
        per_replica = self._config.tpu_config.num_cores_per_replica
        return per_replica is not None and per_replica > self.num_of_cores_per_host

    # -- where a mode runs, and its batch sizes -----------------------------------------
    def is_running_on_cpu(self, is_export_mode: bool = False) -> bool:
        """Whether input_fn and model_fn run on CPU in this mode; on TPU, validates the
        batch sizes against the TPU system first."""
        on_cpu = self._is_running_on_cpu(is_export_mode)
        if not on_cpu:
            self._validate_tpu_configuration()
        return on_cpu

    def _is_running_on_cpu(self, is_export_mode: bool) -> bool:
        mode = self._assert_mode()
        if not self._use_tpu or is_export_mode:
            return True
        return mode == ModeKeys.EVAL and not self._eval_on_tpu

    @property
    def global_batch_size(self) -> int | None:
        mode = self._assert_mode()
        return {
            ModeKeys.TRAIN: self._train_batch_size,
            ModeKeys.EVAL: self._eval_batch_size,
            ModeKeys.PREDICT: self._predict_batch_size,
        }.get(mode)

    @property
    def batch_size_for_input_fn(self) -> int | None:
        """The batch size one input_fn call produces: global on CPU, per replica or per
        host on TPU depending on the input pipeline."""
        size = self.global_batch_size
        if size is None or self.is_running_on_cpu() or self.is_input_broadcast_with_iterators():
            return size
        if (
            self.is_input_sharded_per_core()
            or self.is_input_per_host_with_iterators()
            or self.is_replica_across_hosts()
        ):
            return size // self.num_replicas
        return size // self.num_hosts

    @property
    def batch_size_for_model_fn(self) -> int | None:
        """The batch size one model_fn call sees: global on CPU, per replica on TPU."""
        size = self.global_batch_size
        if size is None or self.is_running_on_cpu():
            return size
        if self.is_input_broadcast_with_iterators() and not (
            self.is_input_slice_broadcast_to_all_cores()
        ):
            return size
        return size // self.num_replicas

    def _validate_tpu_configuration(self) -> None:
        mode = self._assert_mode()
        if self._lazy_validation_dict.get(mode):
            return
        replicas = self.num_replicas
        if not self.num_cores:
            raise RuntimeError(
                "No TPU cores found in the system. Expected a TPU for use_tpu=True. Fix: "
                "check the master address and TPU worker(s), or use use_tpu=False."
            )
        shards = self._config.tpu_config.num_shards
        if shards and shards != replicas:
            raise ValueError(
                f"TPUConfig.num_shards is {shards}, but the TPU system has {replicas} "
                "replicas. Fix: set num_shards to the replica count, or leave it None."
            )
        size = self.global_batch_size
        name = {ModeKeys.TRAIN: "train", ModeKeys.EVAL: "eval"}.get(mode, "predict")
        if size is None and mode != ModeKeys.TRAIN:
            raise ValueError(
                f"{name}_batch_size in TPUEstimator constructor cannot be `None` if "
                f"{name} runs on TPU. Fix: pass {name}_batch_size=..."
            )
        if size is not None and size % replicas and not self.is_input_broadcast_with_iterators():
            raise ValueError(
                f"{name} batch size {size} must be divisible by number of replicas {replicas}"
            )
        self._lazy_validation_dict[mode] = True

    # -- placement ----------------------------------------------------------------------
    @property
    def master_job(self) -> str | None:
        """The job TPU computations are placed on (None for a local master)."""
        config = self._config
        if config.tpu_config.tpu_job_name:
            return config.tpu_config.tpu_job_name
        mode = self._assert_mode()
        master = config.evaluation_master if mode == ModeKeys.EVAL else config.master
        cluster_def = config.session_config.cluster_def if config.session_config else None
        return master_job(master, cluster_def)

    @property
    def tpu_host_placement_function(self) -> Callable[..., str]:
        """`f(replica_id=...)` or `f(host_id=...)`: the CPU device of that host."""
        job = self.master_job

        def placement(_sentinel: Any = None, replica_id: int | None = None,
                      host_id: int | None = None) -> str:  # fmt: skip
            if _sentinel is not None or (replica_id is not None and host_id is not None):
                raise ValueError(
                    "Pass exactly one of replica_id= and host_id= (by keyword). "
                    f"Received: replica_id={replica_id}, host_id={host_id}"
                )
            if job is None:
                return "/replica:0/task:0/device:CPU:0"
            if replica_id is not None:
                if self._model_parallelism_enabled:
                    return self.device_assignment.host_device(replica=replica_id, job=job)
                host_id = replica_id // self.num_of_cores_per_host
            return f"/job:{job}/task:{host_id}/device:CPU:0"

        return placement

    @property
    def tpu_device_placement_function(self) -> Callable[[int], str]:
        """`f(replica_id)`: the TPU device of that replica."""
        job = self.master_job
        job_device = "" if job is None else f"/job:{job}"

        def placement(i: int) -> str:
            if self._model_parallelism_enabled:
                return self.device_assignment.tpu_device(replica=i, job=job)
            per_host = self.num_of_cores_per_host
            return f"{job_device}/task:{i // per_host}/device:TPU:{i % per_host}"

        return placement

    def tpu_ordinal_function(self, host_id: int) -> Callable[[int], int]:
        """`f(shard_index_in_host)`: the TPU ordinal its infeed goes to on `host_id`."""

        def ordinal(shard_index_in_host: int) -> int:
            if self._model_parallelism_enabled:
                replica = self.device_assignment.lookup_replicas(host_id, 0)[shard_index_in_host]
                return self.device_assignment.tpu_ordinal(replica=replica)
            return shard_index_in_host % self.num_of_cores_per_host

        return ordinal

    def device_for_replica(self, replica_id: int) -> tuple[str, int]:
        """(the CPU device of the replica's host, the replica's ordinal on that host)."""
        job = self.master_job
        if self._model_parallelism_enabled:
            return (
                self.device_assignment.host_device(replica=replica_id, job=job),
                self.device_assignment.tpu_ordinal(replica=replica_id),
            )
        job_device = "" if job is None else f"/job:{job}"
        per_host = self.num_of_replicas_per_host
        if per_host <= 0:
            raise ValueError(f"num_of_replicas_per_host must be positive; got {per_host}.")
        return f"{job_device}/task:{replica_id // per_host}/device:CPU:0", replica_id % per_host


class OneCoreTPUContext(InternalTPUContext):
    """The context of `TPUConfig(num_shards=1)`: a one-core, one-host system, never queried.

    Args:
        config: A `tpu.RunConfig`.
        train_batch_size: The training batch size.
        eval_batch_size: The evaluation batch size.
        predict_batch_size: The prediction batch size.
        use_tpu: Whether the TPU runs the model.
    """

    def __init__(
        self,
        config: Any,
        train_batch_size: int | None,
        eval_batch_size: int | None,
        predict_batch_size: int | None,
        use_tpu: bool,
    ) -> None:
        super().__init__(config, train_batch_size, eval_batch_size, predict_batch_size, use_tpu)

    def _get_tpu_system_metadata(self) -> Any:
        master = self._get_master_address() if self._mode is not None else self._config.master
        metadata = self._lazy_tpu_system_metadata_dict.get(master)
        if metadata is None:
            metadata = tf.tpu.experimental.TPUSystemMetadata(
                num_cores=1, num_hosts=1, num_of_cores_per_host=1, topology=None, devices=[]
            )
            self._lazy_tpu_system_metadata_dict[master] = metadata
        return metadata


def get_tpu_context(
    config: Any,
    train_batch_size: int | None,
    eval_batch_size: int | None,
    predict_batch_size: int | None,
    use_tpu: bool,
    eval_on_tpu: bool,
    embedding_config_spec: Any,
) -> InternalTPUContext:
    """The InternalTPUContext TPUEstimator made: a one-core one for `num_shards=1`."""
    tpu_config = config.tpu_config
    if tpu_config.num_shards == 1 and tpu_config.num_cores_per_replica is None:
        if embedding_config_spec is not None:
            raise ValueError(
                "TPUConfig.num_shards==1 is unsupported with an embedding_config_spec. "
                "Fix: leave num_shards None."
            )
        logger.warning("TPUConfig.num_shards==1 is unsupported; leave num_shards as None.")
        return OneCoreTPUContext(
            config, train_batch_size, eval_batch_size, predict_batch_size, use_tpu
        )
    return InternalTPUContext(
        config, train_batch_size, eval_batch_size, predict_batch_size, use_tpu, eval_on_tpu,
        embedding_config_spec,
    )  # fmt: skip


class TPUContext:
    """What TPUEstimator passed as `params["context"]`: the TPU system, seen from one
    input_fn or model_fn call.

    Args:
        internal_ctx: An `InternalTPUContext` entered for a mode.
        input_device: The host device the input_fn runs on.
        invocation_index: This input_fn call's 0-based index.
        call_from_input_fn: Whether this context is given to an input_fn (else model_fn).
        host_id: The host this input_fn runs on.

    Example:
        >>> with internal.with_mode("train") as ctx:
        ...     TPUContext(ctx, "/job:w/task:0/device:CPU:0", 0, host_id=0).num_replicas
    """

    def __init__(
        self,
        internal_ctx: InternalTPUContext,
        input_device: str | None = None,
        invocation_index: int | None = None,
        call_from_input_fn: bool = True,
        host_id: int | None = None,
    ) -> None:
        self._internal_ctx = internal_ctx
        self._input_device = input_device
        self._invocation_index = invocation_index
        self._call_from_input_fn = call_from_input_fn
        self._host_id = host_id

    def _only_in(self, input_fn: bool) -> None:
        if self._call_from_input_fn != input_fn:
            here, there = ("model_fn", "input_fn") if input_fn else ("input_fn", "model_fn")
            raise RuntimeError(
                f"This TPUContext instance must not be called from {here}: the answer is "
                f"only known in the {there}."
            )

    def current_input_fn_deployment(self) -> tuple[str | None, int | None, int, int]:
        """(input device, invocation index, total invocations, replicas this call feeds).

        Only in an input_fn's context.
        """
        self._only_in(input_fn=True)
        ctx = self._internal_ctx
        if ctx.is_input_sharded_per_core():
            total, consumed = ctx.num_hosts * ctx.num_of_replicas_per_host, 1
        elif ctx.is_input_broadcast_with_iterators():
            total, consumed = 1, ctx.num_replicas
        elif ctx.is_replica_across_hosts():
            total, consumed = ctx.num_replicas, 1
        else:
            total, consumed = ctx.num_hosts, ctx.num_of_replicas_per_host
        return self._input_device, self._invocation_index, total, consumed

    @property
    def num_replicas(self) -> int:
        """The total number of replicas."""
        return self._internal_ctx.num_replicas

    @property
    def num_hosts(self) -> int:
        """The number of hosts of the TPU system."""
        return self._internal_ctx.num_hosts

    @property
    def current_host(self) -> int | None:
        """The index of the host this input_fn runs on (only in an input_fn's context)."""
        self._only_in(input_fn=True)
        return self._host_id

    @property
    def num_of_replicas_per_host(self) -> int:
        """The replicas on each host (not under model parallelism)."""
        if self._internal_ctx.model_parallelism_enabled:
            raise ValueError("num_of_replicas_per_host is not supported for model_parallelism")
        return self._internal_ctx.num_of_replicas_per_host

    @property
    def device_assignment(self) -> Any:
        """The TPU DeviceAssignment (only in a model_fn's context)."""
        self._only_in(input_fn=False)
        return self._internal_ctx.device_assignment

    def device_for_replica(self, replica_id: int) -> tuple[str, int]:
        """(CPU device of the replica's host, the replica's device ordinal)."""
        return self._internal_ctx.device_for_replica(replica_id)

    @property
    def tpu_host_placement_function(self) -> Callable[[int], str]:
        """`f(host_id)`: the CPU device of that host."""
        placement = self._internal_ctx.tpu_host_placement_function
        return lambda host_id: placement(host_id=host_id)


class TPUEstimatorReplicaContext(tf.distribute.ReplicaContext):
    """A replica context by replica id, under which summaries record on replica 0 only.

    Args:
        replica_id_in_sync: The 0-based replica id (an int or a scalar tensor).

    Example:
        >>> with TPUEstimatorReplicaContext(tf.constant(1)):
        ...     tf.summary.scalar("loss", loss, step=0)  # not written on replica 1
    """

    def __init__(self, replica_id_in_sync: Any) -> None:
        super().__init__(tf.distribute.get_strategy(), replica_id_in_sync)
        self._recording: Any = None

    def __enter__(self) -> TPUEstimatorReplicaContext:
        replica_id = self.replica_id_in_sync_group
        self._recording = tf.summary.record_if(lambda: tf.math.equal(replica_id, 0))
        self._recording.__enter__()
        return self

    def __exit__(self, exception_type: Any, exception_value: Any, traceback: Any) -> None:
        recording, self._recording = self._recording, None
        recording.__exit__(exception_type, exception_value, traceback)
