"""RunConfig: where and how often an Estimator saves, logs and seeds (tf.estimator 2.15)."""

from __future__ import annotations

import copy
import logging
import os
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np
import tensorflow as tf

from keras_estimator.spec.tf_config import read_tf_config
from keras_estimator.utils.fn_args import fn_args

logger = logging.getLogger("keras_estimator")

_USE_DEFAULT = object()
_Config = TypeVar("_Config", bound="RunConfig")
_SAVE_CKPT_ERR = "`save_checkpoints_steps` and `save_checkpoints_secs` cannot be both set."


def _save_ckpt_error(steps: Any, secs: Any) -> str:
    return (
        f"{_SAVE_CKPT_ERR} Expected at most one of them. Fix: pass save_checkpoints_steps=N "
        "to save every N steps, or save_checkpoints_secs=S to save every S seconds, and set "
        f"the other to None. Received: save_checkpoints_steps={steps!r}, "
        f"save_checkpoints_secs={secs!r}"
    )


def _default_values() -> dict[str, Any]:
    """RunConfig()'s own settings (a checkpoint every 600 s), whatever TF_CONFIG says."""
    import inspect

    parameters = inspect.signature(RunConfig.__init__).parameters
    values = {name: p.default for name, p in parameters.items() if name != "self"}
    values.update(save_checkpoints_steps=None, save_checkpoints_secs=600)
    return values


_NUMERIC = (
    "save_summary_steps", "save_checkpoints_steps", "save_checkpoints_secs",
    "keep_checkpoint_max", "keep_checkpoint_every_n_hours", "log_step_count_steps",
    "session_creation_timeout_secs",
)  # fmt: skip

_REPLACEABLE = [
    "model_dir",
    "tf_random_seed",
    "save_summary_steps",
    "save_checkpoints_steps",
    "save_checkpoints_secs",
    "session_config",
    "keep_checkpoint_max",
    "keep_checkpoint_every_n_hours",
    "log_step_count_steps",
    "train_distribute",
    "device_fn",
    "protocol",
    "eval_distribute",
    "experimental_distribute",
    "experimental_max_worker_delay_secs",
    "session_creation_timeout_secs",
    "checkpoint_save_graph_def",
    "steps_per_execution",
    "save_on_sigterm",
]


def _global_id_in_cluster(cluster_spec: Any, task_type: str, task_id: int, chief_job: str) -> int:
    """tf.estimator's numbering: the chief first, then the other jobs by name, ps last."""
    order = [chief_job] + sorted(j for j in cluster_spec.jobs if j not in (chief_job, TaskType.PS))
    if TaskType.PS in cluster_spec.jobs:
        order.append(TaskType.PS)
    first = 0
    for job in order:
        if job == task_type:
            return first + task_id
        first += len(cluster_spec.job_tasks(job)) if job in cluster_spec.jobs else 0
    raise ValueError(f"Task type {task_type!r} is not in the TF_CONFIG cluster {cluster_spec}.")


_NOTE_TF_CONFIG = "Note that these values may be coming from the TF_CONFIG environment variable."


def _session_master(cluster_spec: Any, task_type: str, task_id: int, tf_config: dict) -> str:
    """tf.estimator 2.15's `master`: TF_CONFIG's "session_master" if set; '' (in process)
    for a one-node cluster; else `grpc://` + this task's address."""
    if "session_master" in tf_config:
        return tf_config["session_master"]
    jobs = cluster_spec.jobs
    if len(jobs) == 1 and len(cluster_spec.job_tasks(jobs[0])) == 1:
        return ""
    return "grpc://" + cluster_spec.job_tasks(task_type)[task_id]


def _eval_session_master(task_type: str, tf_config: dict) -> str:
    """tf.estimator 2.15's `evaluation_master`: TF_CONFIG's "eval_session_master" on the
    evaluator, '' on every other task."""
    if task_type == TaskType.EVALUATOR:
        return tf_config.get("eval_session_master", "")
    return ""


def _validate_service(service: Any) -> Any:
    if service is not None and not isinstance(service, dict):
        raise TypeError(
            f'If "service" is set in TF_CONFIG, it must be a dict. Given {type(service)}. '
            'Expected a JSON object, e.g. "service": {"tpu_worker_job_name": "tpu_worker"}. '
            'Fix: make TF_CONFIG\'s "service" an object, or remove it. '
            f"Received: TF_CONFIG['service']={service!r}"
        )
    return service


def _validate_task(cluster_spec: Any, task: dict, chief_job: str) -> tuple[str, int]:
    """tf.estimator 2.15's checks of TF_CONFIG's task against its cluster, in its order."""
    jobs = list(cluster_spec.jobs)
    if chief_job not in jobs:
        raise ValueError(
            f'If "cluster" is set in TF_CONFIG, it must have one "{chief_job}" node. Expected '
            f'a "{chief_job}" job with one address in TF_CONFIG\'s cluster. Fix: add e.g. '
            f'"{chief_job}": ["host:port"] to the cluster (with a tf.distribute strategy as '
            "RunConfig(train_distribute=...), a cluster of workers only is accepted). "
            f"Received: TF_CONFIG['cluster'] jobs={sorted(jobs)}"
        )
    chiefs = cluster_spec.job_tasks(chief_job)
    if len(chiefs) > 1:
        raise ValueError(
            f'The "cluster" in TF_CONFIG must have only one "{chief_job}" node. Expected one '
            f'address in the "{chief_job}" job. Fix: keep one and move the others to "worker". '
            f"Received: TF_CONFIG['cluster']['{chief_job}']={chiefs}"
        )
    task_type, task_id = task.get("type"), task.get("index")
    if not task_type:
        raise ValueError(
            'If "cluster" is set in TF_CONFIG, task type must be set. Fix: add '
            f'"task": {{"type": "worker", "index": 0}} (or {chief_job}, ps, evaluator) to '
            f"TF_CONFIG. Received: TF_CONFIG['task']={task!r}"
        )
    if task_id is None:
        raise ValueError(
            'If "cluster" is set in TF_CONFIG, task index must be set. Fix: add '
            f'"index": i to TF_CONFIG\'s task, e.g. "task": {{"type": "{task_type}", '
            f"\"index\": 0}}. Received: TF_CONFIG['task']={task!r}"
        )
    task_id = int(task_id)
    if task_id < 0:
        raise ValueError(
            "Task index must be non-negative number. Fix: set TF_CONFIG's "
            '"task": {"index": i} with 0 <= i < the number of tasks of that type. '
            f"Received: TF_CONFIG['task']['index']={task_id}"
        )
    if task_type == TaskType.EVALUATOR:
        return task_type, task_id  # the evaluator is not part of the training cluster
    if task_type not in jobs:
        raise ValueError(
            f"{task_type} is not a valid task_type in the cluster_spec:\n{cluster_spec}\n\n"
            f"{_NOTE_TF_CONFIG} Expected one of the cluster's jobs {sorted(jobs)} or "
            '\'evaluator\'. Fix: set TF_CONFIG\'s "task": {"type": ...} to one of those. '
            f"Received: TF_CONFIG['task']['type']={task_type!r}"
        )
    addresses = cluster_spec.job_tasks(task_type)
    if not 0 <= task_id < len(addresses):
        raise ValueError(
            f"{task_id} is not a valid task_id for task_type {task_type} in the "
            f"cluster_spec:\n{cluster_spec}\n\n{_NOTE_TF_CONFIG} Expected 0 <= index < "
            f"{len(addresses)}. Fix: set TF_CONFIG's task index within the {task_type!r} job. "
            f"Received: TF_CONFIG['task']['index']={task_id}"
        )
    return task_type, task_id


def _strategy_reads_cluster(train_distribute: Any, experimental_distribute: Any) -> bool:
    """tf.estimator 2.15 left a TF_CONFIG cluster to its distribute coordinator (no chief
    required, no checks) when training under a non-TPU strategy."""
    train = train_distribute or getattr(experimental_distribute, "train_distribute", None)
    return train is not None and not type(train).__name__.startswith("TPUStrategy")


def _verify_strategy_compatibility(train_distribute: Any, eval_distribute: Any) -> None:
    v2_ps = tf.distribute.experimental.ParameterServerStrategy
    for name, strategy in (
        ("train_distribute", train_distribute),
        ("eval_distribute", eval_distribute),
    ):
        if strategy is not None and strategy.__class__ == v2_ps:
            raise ValueError(
                "Please use `tf.compat.v1.distribute.experimental.ParameterServerStrategy` for "
                "parameter server strategy with estimator. Expected no TF2 "
                "ParameterServerStrategy in RunConfig. Fix: pass "
                f"{name}=None with ps tasks in TF_CONFIG: keras_estimator then builds the "
                "ParameterServerStrategy itself, the chief coordinating. "
                f"Received: {name}={type(strategy).__name__}"
            )


class TaskType:
    MASTER = "master"
    PS = "ps"
    WORKER = "worker"
    CHIEF = "chief"
    EVALUATOR = "evaluator"


def _path_to_str(path: Any) -> Any:
    return os.fspath(path) if isinstance(path, os.PathLike) else path


def _model_dir_from(tf_config: dict, model_dir: Any) -> Any:
    if model_dir == "":
        raise ValueError(
            "model_dir should be non-empty. Expected a directory path or None. Fix: pass "
            "model_dir='path/to/dir', or leave it out for a temporary directory. "
            "Received: model_dir=''"
        )
    from_config = tf_config.get("model_dir")
    if from_config == "":
        raise ValueError(
            'model_dir in TF_CONFIG should be non-empty. Fix: set TF_CONFIG\'s "model_dir" '
            "to a path, or remove the key. Received: TF_CONFIG['model_dir']=''"
        )
    if from_config and model_dir and from_config != model_dir:
        raise ValueError(
            "`model_dir` provided in RunConfig construct, if set, must have the same value as "
            f"the model_dir in TF_CONFIG. model_dir: {model_dir}\n"
            f'TF_CONFIG["model_dir"]: {from_config}.\n'
            "Fix: set model_dir in one of the two places only, or to the same path in both. "
            f"Received: model_dir={model_dir!r}, TF_CONFIG['model_dir']={from_config!r}"
        )
    return model_dir or from_config


class RunConfig:
    """Run-time configuration of an Estimator, with tf.estimator 2.15's defaults.

    Checkpoints are saved every 600 seconds unless `save_checkpoints_steps` or
    `save_checkpoints_secs` says otherwise (setting both is an error); the newest
    `keep_checkpoint_max` (5) are kept; the loss is logged every `log_step_count_steps` (100)
    steps and `tf_random_seed` makes runs repeatable. `steps_per_execution` (not in
    tf.estimator) caps how many training steps run per compiled call. `save_on_sigterm` (not
    in tf.estimator, default True): SIGTERM during train() (a preemption) saves a checkpoint
    after the current run of steps and exits with status 143; False keeps SIGTERM's default.

    Example:
        >>> config = RunConfig(model_dir="/tmp/m", save_checkpoints_steps=500)
        >>> config.save_checkpoints_secs is None
        True
    """

    # The settings: set by _set() (by name, from __init__'s or replace()'s arguments) and
    # read by the properties below.
    _model_dir: str | None
    _tf_random_seed: int | None
    _save_summary_steps: int | None
    _save_checkpoints_steps: int | None
    _save_checkpoints_secs: int | None
    _session_config: tf.compat.v1.ConfigProto | None
    _keep_checkpoint_max: int | None
    _keep_checkpoint_every_n_hours: float | None
    _log_step_count_steps: int | None
    _train_distribute: tf.distribute.Strategy | None
    _device_fn: Callable[[tf.Operation], str] | None
    _protocol: str | None
    _eval_distribute: tf.distribute.Strategy | None
    # tf.contrib's DistributeConfig, or any object with its train_distribute / eval_distribute
    _experimental_distribute: Any
    _experimental_max_worker_delay_secs: int | None
    _session_creation_timeout_secs: int
    _checkpoint_save_graph_def: bool
    _steps_per_execution: int | None
    _save_on_sigterm: bool
    # From TF_CONFIG (_init_cluster): None for an evaluator, outside the training cluster.
    _global_id_in_cluster: int | None

    def __init__(
        self,
        model_dir: str | None = None,
        tf_random_seed: int | None = None,
        save_summary_steps: int | None = 100,
        save_checkpoints_steps: Any = _USE_DEFAULT,
        save_checkpoints_secs: Any = _USE_DEFAULT,
        session_config: Any = None,
        keep_checkpoint_max: int | None = 5,
        keep_checkpoint_every_n_hours: float | None = 10000,
        log_step_count_steps: int | None = 100,
        train_distribute: Any = None,
        device_fn: Any = None,
        protocol: str | None = None,
        eval_distribute: Any = None,
        experimental_distribute: Any = None,
        experimental_max_worker_delay_secs: int | None = None,
        session_creation_timeout_secs: int = 7200,
        checkpoint_save_graph_def: bool = True,
        steps_per_execution: int | None = None,
        save_on_sigterm: bool = True,
    ) -> None:
        if save_checkpoints_steps is _USE_DEFAULT and save_checkpoints_secs is _USE_DEFAULT:
            save_checkpoints_steps, save_checkpoints_secs = None, 600
        elif save_checkpoints_secs is _USE_DEFAULT:
            save_checkpoints_secs = None
        elif save_checkpoints_steps is _USE_DEFAULT:
            save_checkpoints_steps = None
        elif save_checkpoints_steps is not None and save_checkpoints_secs is not None:
            raise ValueError(_save_ckpt_error(save_checkpoints_steps, save_checkpoints_secs))
        _verify_strategy_compatibility(train_distribute, eval_distribute)

        tf_config = read_tf_config()
        self._tf_config = tf_config

        self._set(
            model_dir=_model_dir_from(tf_config, _path_to_str(model_dir)),
            tf_random_seed=tf_random_seed,
            save_summary_steps=save_summary_steps,
            save_checkpoints_steps=save_checkpoints_steps,
            save_checkpoints_secs=save_checkpoints_secs,
            session_config=session_config,
            keep_checkpoint_max=keep_checkpoint_max,
            keep_checkpoint_every_n_hours=keep_checkpoint_every_n_hours,
            log_step_count_steps=log_step_count_steps,
            train_distribute=train_distribute,
            device_fn=device_fn,
            protocol=protocol,
            eval_distribute=eval_distribute,
            experimental_distribute=experimental_distribute,
            experimental_max_worker_delay_secs=experimental_max_worker_delay_secs,
            session_creation_timeout_secs=session_creation_timeout_secs,
            checkpoint_save_graph_def=checkpoint_save_graph_def,
            steps_per_execution=steps_per_execution,
            save_on_sigterm=save_on_sigterm,
        )
        self._init_cluster(tf_config)

    # -- construction helpers -------------------------------------------------
    def _set(self, **kwargs: Any) -> None:
        for key, value in kwargs.items():
            if key not in _REPLACEABLE:
                raise ValueError(
                    f"Replacing {key} is not supported. Allowed properties are {_REPLACEABLE}. "
                    "Fix: replace only those; cluster and task come from TF_CONFIG. "
                    f"Received: {key}={value!r}"
                )
            setattr(self, "_" + key, value)
        self._validate()

    def _validate(self) -> None:
        def check(name: str, ok: Any, message: str) -> None:
            value = getattr(self, "_" + name)
            if value is not None and not ok(value):
                raise ValueError(f"{message} Received: {name}={value!r}")

        for name in _NUMERIC:
            value = getattr(self, "_" + name)
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int | float | np.number)
            ):
                raise TypeError(
                    f"RunConfig {name} must be a number or None, but it is not. Fix: pass "
                    f"{name}=N (a number), or None. "
                    f"Received: {name}={value!r} (type {type(value).__name__})"
                )

        check(
            "model_dir",
            lambda d: d,
            "model_dir should be non-empty. Fix: pass a directory path, or None.",
        )
        check(
            "save_summary_steps",
            lambda s: s >= 0,
            "save_summary_steps should be >= 0. Fix: pass N to save summaries every N steps, "
            "or 0 for none.",
        )
        check(
            "save_checkpoints_steps",
            lambda s: s >= 0,
            "save_checkpoints_steps should be >= 0. Fix: pass N to save every N steps, or None.",
        )
        check(
            "save_checkpoints_secs",
            lambda s: s >= 0,
            "save_checkpoints_secs should be >= 0. Fix: pass S to save every S seconds, or None.",
        )
        check(
            "session_config",
            lambda c: isinstance(c, tf.compat.v1.ConfigProto),
            "session_config must be instance of ConfigProto. Fix: pass "
            "tf.compat.v1.ConfigProto(...), or None.",
        )
        check(
            "keep_checkpoint_max",
            lambda k: k >= 0,
            "keep_checkpoint_max should be >= 0. Fix: pass N to keep the newest N checkpoints, "
            "or 0 / None to keep all.",
        )
        check(
            "keep_checkpoint_every_n_hours",
            lambda h: h > 0,
            "keep_checkpoint_every_n_hours should be > 0. Fix: pass a positive number of hours.",
        )
        check(
            "log_step_count_steps",
            lambda n: n > 0,
            "log_step_count_steps should be > 0. Fix: pass N to log every N steps, or None.",
        )
        check(
            "steps_per_execution",
            lambda n: isinstance(n, int) and not isinstance(n, bool) and n > 0,
            "steps_per_execution must be a positive integer (or None: chosen automatically). "
            "Fix: pass steps_per_execution=N with N >= 1, or None.",
        )
        check(
            "save_on_sigterm",
            lambda v: isinstance(v, bool),
            "save_on_sigterm must be True or False. Fix: pass save_on_sigterm=False to let "
            "SIGTERM stop train() at once, or True (default) to save first.",
        )
        check(
            "tf_random_seed",
            lambda s: isinstance(s, int) and not isinstance(s, bool),
            "tf_random_seed must be integer. Fix: pass an int such as tf_random_seed=42, or None.",
        )
        check(
            "experimental_max_worker_delay_secs",
            lambda d: isinstance(d, int),
            "experimental_max_worker_delay_secs must be an integer if set. Fix: pass a whole "
            "number of seconds, or None.",
        )
        check(
            "session_creation_timeout_secs",
            lambda t: t > 0,
            "session_creation_timeout_secs should be > 0. Fix: pass a positive number of "
            "seconds (default 7200).",
        )
        check(
            "device_fn",
            lambda f: callable(f) and set(fn_args(f)) == {"op"},
            'device_fn must be callable with exactly one argument "op". Expected '
            "device_fn(op) -> device string. Fix: rename its argument to op, e.g. "
            "device_fn=lambda op: '/cpu:0'.",
        )
        check(
            "protocol",
            lambda p: p in ("grpc", "grpc+verbs"),
            "protocol should be grpc or grpc+verbs. Fix: pass protocol='grpc', or None (grpc).",
        )

    def _init_cluster(self, tf_config: dict) -> None:
        """Task, cluster and masters from TF_CONFIG, checked as tf.estimator 2.15 did."""
        self._service = _validate_service(tf_config.get("service"))
        cluster = tf_config.get("cluster") or {}
        task = tf_config.get("task") or {}
        self._cluster_spec = tf.train.ClusterSpec(cluster)
        if not cluster:
            self._init_local(task, tf_config)
        elif TaskType.MASTER in self._cluster_spec.jobs:
            self._init_with_master(task, tf_config)
        elif _strategy_reads_cluster(self._train_distribute, self._experimental_distribute):
            self._init_for_strategy(task, tf_config)
        else:
            self._init_with_chief(task, tf_config)

    def _init_local(self, task: dict, tf_config: dict) -> None:
        self._task_type = task.get("type", TaskType.WORKER)
        self._task_id = int(task.get("index", 0))
        if self._task_type != TaskType.WORKER:
            raise ValueError(
                'If "cluster" is not set in TF_CONFIG, task type must be WORKER. Expected '
                'TF_CONFIG\'s task type "worker" (or no task) when there is no cluster. Fix: '
                'add the "cluster" of the job to TF_CONFIG, or remove the task. '
                f"Received: TF_CONFIG['task']['type']={self._task_type!r}"
            )
        if self._task_id != 0:
            raise ValueError(
                'If "cluster" is not set in TF_CONFIG, task index must be 0. Fix: add the '
                '"cluster" of the job to TF_CONFIG, or set the task index to 0. '
                f"Received: TF_CONFIG['task']['index']={self._task_id}"
            )
        self._master = tf_config.get("session_master", "")
        self._evaluation_master = tf_config.get("eval_session_master", "")
        self._is_chief = True
        self._num_ps_replicas = 0
        self._num_worker_replicas = 1
        self._global_id_in_cluster = 0

    def _init_in_cluster(self, tf_config: dict, chief_job: str) -> None:
        spec, task_type, task_id = self._cluster_spec, self._task_type, self._task_id
        self._master = _session_master(spec, task_type, task_id, tf_config)
        self._evaluation_master = _eval_session_master(task_type, tf_config)
        self._num_ps_replicas = len(spec.as_dict().get(TaskType.PS, []))
        self._num_worker_replicas = len(spec.as_dict().get(TaskType.WORKER, [])) + len(
            spec.as_dict().get(chief_job, [])
        )
        self._global_id_in_cluster = _global_id_in_cluster(spec, task_type, task_id, chief_job)

    def _init_as_evaluator(self, tf_config: dict) -> None:
        # tf.estimator: the evaluator is outside the training cluster it reads from.
        self._cluster_spec = tf.train.ClusterSpec({})
        self._master = ""
        self._evaluation_master = _eval_session_master(TaskType.EVALUATOR, tf_config)
        self._num_ps_replicas = self._num_worker_replicas = 0
        self._global_id_in_cluster = None
        self._is_chief = False

    def _init_with_chief(self, task: dict, tf_config: dict) -> None:
        self._task_type, self._task_id = _validate_task(self._cluster_spec, task, TaskType.CHIEF)
        if self._task_type == TaskType.EVALUATOR:
            self._init_as_evaluator(tf_config)
            return
        self._init_in_cluster(tf_config, TaskType.CHIEF)
        self._is_chief = self._task_type == TaskType.CHIEF

    def _init_with_master(self, task: dict, tf_config: dict) -> None:
        if TaskType.CHIEF in self._cluster_spec.jobs:
            raise ValueError(
                "If `master` node exists in `cluster`, job `chief` is not supported. Expected "
                "one of the two in TF_CONFIG's cluster. Fix: rename the master job to chief "
                f"(or drop the chief job). Received: TF_CONFIG['cluster'] jobs="
                f"{sorted(self._cluster_spec.jobs)}"
            )
        self._task_type, self._task_id = _validate_task(self._cluster_spec, task, TaskType.MASTER)
        if self._task_type == TaskType.EVALUATOR:
            raise ValueError(
                "If `master` node exists in `cluster`, task_type `evaluator` is not supported. "
                "Fix: name the master job chief in TF_CONFIG's cluster to run an evaluator "
                f"task. Received: TF_CONFIG['task']={task!r}"
            )
        self._init_in_cluster(tf_config, TaskType.MASTER)
        self._is_chief = self._task_type == TaskType.MASTER

    def _init_for_strategy(self, task: dict, tf_config: dict) -> None:
        """Under a training strategy tf.estimator 2.15 did not check the cluster (its
        coordinator read TF_CONFIG). keras_estimator reads the task itself: the index defaults
        to 0 and in a cluster of workers only, worker 0 is the chief."""
        jobs = set(self._cluster_spec.jobs)
        if "type" not in task:
            raise ValueError(
                'If "cluster" is set in TF_CONFIG, task type must be set. Fix: add '
                '"task": {"type": "worker", "index": 0} (or chief, ps, evaluator) to '
                f"TF_CONFIG. Received: TF_CONFIG['task']={task!r}"
            )
        self._task_type = task["type"]
        self._task_id = int(task.get("index", 0))
        if self._task_id < 0:
            raise ValueError(
                "Task index must be non-negative number. Fix: set TF_CONFIG's "
                '"task": {"index": i} with 0 <= i < the number of tasks of that type. '
                f"Received: TF_CONFIG['task']['index']={self._task_id}"
            )
        if self._task_type == TaskType.EVALUATOR:
            self._init_as_evaluator(tf_config)
            return
        if self._task_type not in jobs:
            raise ValueError(
                f"{self._task_type} is not a valid task_type in the cluster_spec:\n"
                f"{self._cluster_spec}\n\n{_NOTE_TF_CONFIG} Expected one of the cluster's "
                f"jobs {sorted(jobs)} or 'evaluator'. Fix: set TF_CONFIG's "
                '"task": {"type": ...} to one of those. '
                f"Received: TF_CONFIG['task']['type']={self._task_type!r}"
            )
        addresses = self._cluster_spec.job_tasks(self._task_type)
        if self._task_id >= len(addresses):
            raise ValueError(
                f"{self._task_id} is not a valid task_id for task_type {self._task_type} in "
                f"the cluster_spec:\n{self._cluster_spec}\n\n{_NOTE_TF_CONFIG} Expected "
                f"0 <= index < {len(addresses)}. Fix: set TF_CONFIG's task index within the "
                f"{self._task_type!r} job. Received: TF_CONFIG['task']['index']={self._task_id}"
            )
        self._init_in_cluster(tf_config, TaskType.CHIEF)
        self._is_chief = self._task_type == TaskType.CHIEF or (
            TaskType.CHIEF not in jobs and self._task_type == TaskType.WORKER and not self._task_id
        )

    # -- tf.estimator's public properties --------------------------------------
    cluster_spec = property(lambda self: self._cluster_spec)
    is_chief = property(lambda self: self._is_chief)
    task_type = property(lambda self: self._task_type)
    task_id = property(lambda self: self._task_id)
    num_ps_replicas = property(lambda self: self._num_ps_replicas)
    num_worker_replicas = property(lambda self: self._num_worker_replicas)
    master = property(lambda self: self._master)
    evaluation_master = property(lambda self: self._evaluation_master)
    global_id_in_cluster = property(lambda self: self._global_id_in_cluster)
    service = property(lambda self: self._service)
    model_dir = property(lambda self: self._model_dir)
    tf_random_seed = property(lambda self: self._tf_random_seed)
    save_summary_steps = property(lambda self: self._save_summary_steps)
    save_checkpoints_steps = property(lambda self: self._save_checkpoints_steps)
    save_checkpoints_secs = property(lambda self: self._save_checkpoints_secs)
    session_config = property(lambda self: self._session_config)
    keep_checkpoint_max = property(lambda self: self._keep_checkpoint_max)
    keep_checkpoint_every_n_hours = property(lambda self: self._keep_checkpoint_every_n_hours)
    log_step_count_steps = property(lambda self: self._log_step_count_steps)
    train_distribute = property(lambda self: self._train_distribute)
    eval_distribute = property(lambda self: self._eval_distribute)
    experimental_distribute = property(lambda self: self._experimental_distribute)
    device_fn = property(lambda self: self._device_fn)
    protocol = property(lambda self: self._protocol)
    experimental_max_worker_delay_secs = property(
        lambda self: self._experimental_max_worker_delay_secs
    )
    session_creation_timeout_secs = property(lambda self: self._session_creation_timeout_secs)
    checkpoint_save_graph_def = property(lambda self: self._checkpoint_save_graph_def)
    # keras_estimator's own: at most this many training steps per compiled call. None: as
    # many as the logging / checkpoint / hook cadences allow (up to 1000); 1: every step
    # returns to Python (hooks then see each step's own state).
    steps_per_execution = property(lambda self: self._steps_per_execution)
    # keras_estimator's own: SIGTERM during train() saves a checkpoint after the current
    # run of steps, then exits with status 143 (False: SIGTERM's default, as tf.estimator).
    save_on_sigterm = property(lambda self: self._save_on_sigterm)

    # Strategies and device functions are shared by copies: copying a strategy builds a new
    # one (new devices, new collectives), which is never what a copied config means.
    _SHARED_ON_COPY = frozenset(
        {"_train_distribute", "_eval_distribute", "_experimental_distribute", "_device_fn"}
    )

    def __deepcopy__(self: _Config, memo: dict) -> _Config:
        new = object.__new__(type(self))
        memo[id(self)] = new
        for key, value in self.__dict__.items():
            shared = key in self._SHARED_ON_COPY
            new.__dict__[key] = value if shared else copy.deepcopy(value, memo)
        return new

    def replace(self: _Config, **kwargs: Any) -> _Config:
        """Returns a copy with the given properties replaced (same list as tf.estimator).

        Example:
            >>> RunConfig().replace(save_checkpoints_steps=10).save_checkpoints_secs is None
            True
        """
        new = copy.deepcopy(self)
        new._set(**kwargs)
        steps, secs = new._save_checkpoints_steps, new._save_checkpoints_secs
        if "save_checkpoints_steps" in kwargs and "save_checkpoints_secs" in kwargs:
            if steps is not None and secs is not None:
                raise ValueError(_save_ckpt_error(steps, secs))
        elif "save_checkpoints_steps" in kwargs and steps is not None:
            new._save_checkpoints_secs = None
        elif "save_checkpoints_secs" in kwargs and secs is not None:
            new._save_checkpoints_steps = None
        return new

    def __repr__(self) -> str:
        """Only what differs from `RunConfig()` (and the task, in a TF_CONFIG cluster)."""
        defaults = _default_values()
        shown = [
            f"{k}={value!r}"
            for k in _REPLACEABLE + ["steps_per_execution"]
            if (value := getattr(self, "_" + k, None)) != defaults.get(k)
        ]
        if self._cluster_spec.jobs:
            shown.append(f"task={self._task_type}:{self._task_id}")
        return f"RunConfig({', '.join(shown)})"
