"""`tf.estimator.tpu` configuration: TPUConfig, InputPipelineConfig and the TPU RunConfig.

Same fields, defaults and validation messages as tf.estimator 2.15. Off TPU (use_tpu=False)
only `iterations_per_loop` matters: it is how many steps run per compiled execution.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from typing import Any, NamedTuple, TypeVar

import tensorflow as tf

from keras_estimator.spec.run_config import RunConfig as _BaseRunConfig
from keras_estimator.spec.tf_config import read_tf_config

logger = logging.getLogger("keras_estimator")
_ITERATIONS_PER_LOOP = re.compile(r"^(?P<value>[1-9]\d*)((?P<suffix>[s|m|h])$|$)")


class InputPipelineConfig:
    """How TPUEstimator fed its input (values of `TPUConfig.per_host_input_for_training`)."""

    PER_SHARD_V1 = 1
    PER_HOST_V1 = 2
    PER_HOST_V2 = 3
    BROADCAST = 4
    SLICED = 5


class IterationsPerLoop(NamedTuple):
    value: int
    unit: str  # "count" or "seconds"


def parse_iterations_per_loop(iterations_per_loop: Any) -> IterationsPerLoop:
    """A positive count, or `<N>s` / `<N>m` / `<N>h` of time per loop."""
    match = _ITERATIONS_PER_LOOP.match(str(iterations_per_loop))
    if match is None:
        raise ValueError(
            "Invalid TPUConfig `iterations_per_loop` value. Value must be positive integer "
            "value or time-based value `<N><s|m|h>` where <N> is any positive integer and "
            "`s`, `m`, `h` are unit of time in seconds, minutes, hours respectively. Examples "
            f"of valid values: `3600s`, `60m`, `1h`. Given: {iterations_per_loop!r}"
        )
    value, suffix = int(match.group("value")), match.group("suffix")
    if suffix is None:
        return IterationsPerLoop(value, "count")
    return IterationsPerLoop(value * {"s": 1, "m": 60, "h": 3600}[suffix], "seconds")


def _check_positive_integer(value: Any, name: str) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ValueError(f"{name} must be positive integer. Given: {value!r}")


def _tpu_job_name_from_tf_config() -> str | None:
    service = read_tf_config().get("service") or {}
    return service.get("tpu_worker_job_name") if isinstance(service, dict) else None


class _TPUConfigFields(NamedTuple):
    """TPUConfig's fields, in tf.estimator's order (no defaults: `TPUConfig.__new__` has
    them, and validates)."""

    iterations_per_loop: int | str  # a count, or `<N>s` / `<N>m` / `<N>h`
    num_shards: int | None
    num_cores_per_replica: int | None
    per_host_input_for_training: int  # an InputPipelineConfig value (True / False mapped)
    tpu_job_name: str | None
    initial_infeed_sleep_secs: int | None
    input_partition_dims: Sequence[Any] | None
    eval_training_input_configuration: int
    experimental_host_call_every_n_steps: int
    experimental_allow_per_host_v2_parallel_get_next: bool
    # The SessionRunHook class TPUEstimator used for infeed/outfeed in place of its own.
    experimental_feed_hook: type[tf.compat.v1.train.SessionRunHook] | None


class TPUConfig(_TPUConfigFields):
    """TPU settings of a `tpu.RunConfig`, as `tf.estimator.tpu.TPUConfig`.

    Example:
        >>> config = RunConfig(tpu_config=TPUConfig(iterations_per_loop=100, num_shards=8))
    """

    def __new__(
        cls,
        iterations_per_loop: int | str = 2,
        num_shards: int | None = None,
        num_cores_per_replica: int | None = None,
        per_host_input_for_training: bool | int = True,
        tpu_job_name: str | None = None,
        initial_infeed_sleep_secs: int | None = None,
        input_partition_dims: Sequence[Any] | None = None,
        eval_training_input_configuration: int = InputPipelineConfig.PER_HOST_V1,
        experimental_host_call_every_n_steps: int = 1,
        experimental_allow_per_host_v2_parallel_get_next: bool = False,
        experimental_feed_hook: type[tf.compat.v1.train.SessionRunHook] | None = None,
    ) -> TPUConfig:
        parse_iterations_per_loop(iterations_per_loop)
        if num_shards is not None:
            _check_positive_integer(num_shards, "TPUConfig num_shards")
        if input_partition_dims is not None:
            if len(input_partition_dims) not in (1, 2):
                raise ValueError(
                    "input_partition_dims must be a list/tuple with one or two elements."
                )
            if per_host_input_for_training is not InputPipelineConfig.PER_HOST_V2:
                raise ValueError("input_partition_dims is only supported in PER_HOST_V2 mode.")
            if num_cores_per_replica is None:
                raise ValueError("input_partition_dims requires setting num_cores_per_replica.")
        if num_cores_per_replica is not None and num_cores_per_replica not in (
            1, 2, 4, 8, 16, 32, 64, 128,
        ):  # fmt: skip
            raise ValueError(
                "num_cores_per_replica must be 1, 2, 4, 8, 16, 32, 64, 128; "
                f"got {num_cores_per_replica}"
            )
        if eval_training_input_configuration not in (
            InputPipelineConfig.PER_HOST_V1,
            InputPipelineConfig.SLICED,
        ):
            raise ValueError(
                "eval_training_input_configuration must be PER_HOST_V1 or SLICED; "
                f"got {eval_training_input_configuration}"
            )
        if per_host_input_for_training is False:
            per_host_input_for_training = InputPipelineConfig.PER_SHARD_V1
        elif per_host_input_for_training is True:
            per_host_input_for_training = InputPipelineConfig.PER_HOST_V1
        if initial_infeed_sleep_secs:
            _check_positive_integer(
                initial_infeed_sleep_secs, "TPUConfig initial_infeed_sleep_secs"
            )
        return super().__new__(
            cls,
            iterations_per_loop=iterations_per_loop,
            num_shards=num_shards,
            num_cores_per_replica=num_cores_per_replica,
            per_host_input_for_training=per_host_input_for_training,
            tpu_job_name=tpu_job_name or _tpu_job_name_from_tf_config(),
            initial_infeed_sleep_secs=initial_infeed_sleep_secs,
            input_partition_dims=input_partition_dims,
            eval_training_input_configuration=eval_training_input_configuration,
            experimental_host_call_every_n_steps=experimental_host_call_every_n_steps,
            experimental_allow_per_host_v2_parallel_get_next=(
                experimental_allow_per_host_v2_parallel_get_next
            ),
            experimental_feed_hook=experimental_feed_hook,
        )


_TPURunConfig = TypeVar("_TPURunConfig", bound="RunConfig")


class RunConfig(_BaseRunConfig):
    """A RunConfig with TPU settings, as `tf.estimator.tpu.RunConfig`.

    Args:
        tpu_config: The `TPUConfig` (default `TPUConfig()`).
        evaluation_master: Master for evaluation; defaults to `master`.
        master: Master address for training (not with `cluster`).
        cluster: A `tf.distribute.cluster_resolver.TPUClusterResolver` (or another
            ClusterResolver); its master and cluster spec are used.
        **kwargs: The arguments of `keras_estimator.RunConfig`.

    Example:
        >>> config = RunConfig(model_dir="gs://b/m", tpu_config=TPUConfig(iterations_per_loop=100))
    """

    def __init__(
        self,
        tpu_config: TPUConfig | None = None,
        evaluation_master: str | None = None,
        master: str | None = None,
        cluster: Any = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self._tpu_config = tpu_config or TPUConfig()
        self._cluster = cluster
        if master is not None:
            if cluster is not None:
                raise ValueError("Both master and cluster are set.")
            self._master = master
        elif cluster:
            self._master = cluster.master()
        if evaluation_master is not None:
            self._evaluation_master = evaluation_master
        elif not self._evaluation_master and self.task_type != "evaluator":
            self._evaluation_master = self._master
        if cluster:
            self._cluster_spec = cluster.cluster_spec()
            if self._session_config is None:
                self._session_config = tf.compat.v1.ConfigProto(
                    allow_soft_placement=True, isolate_session_state=True
                )
            if self._session_config.HasField("cluster_def"):
                raise ValueError(
                    "You cannot provide a ClusterResolver and session_config.cluster_def."
                )
            if self._cluster_spec:
                self._session_config.cluster_def.CopyFrom(self._cluster_spec.as_cluster_def())

    tpu_config = property(lambda self: self._tpu_config)
    cluster = property(lambda self: self._cluster)

    # A cluster resolver holds clients and locks: copies share it.
    _SHARED_ON_COPY = _BaseRunConfig._SHARED_ON_COPY | {"_cluster"}

    def replace(self: _TPURunConfig, **kwargs: Any) -> _TPURunConfig:
        tpu_config = kwargs.pop("tpu_config", None)
        new = super().replace(**kwargs)
        if tpu_config is not None:
            new._tpu_config = tpu_config
        return new
