"""2.15's `run_config`: `RunConfig`, `TaskType` and the helpers libraries call."""

from __future__ import annotations

from typing import Any

import tensorflow as tf

from keras_estimator.spec.run_config import (
    RunConfig,
    TaskType,
    _eval_session_master,
    _global_id_in_cluster,
    _model_dir_from,
    _path_to_str,
    _session_master,
    _validate_service,
)

__all__ = [
    "RunConfig",
    "TaskType",
    "_validate_service",
    "get_default_session_config",
    "path_to_str",
]


def get_default_session_config() -> Any:
    """2.15's default `tf.compat.v1.ConfigProto`: soft placement, graph options kept."""
    return tf.compat.v1.ConfigProto(
        allow_soft_placement=True, graph_options=tf.compat.v1.GraphOptions()
    )


def path_to_str(path: Any) -> Any:
    """A `os.PathLike` as its string; anything else as given."""
    return _path_to_str(path)


def _count_ps(cluster_spec: Any) -> int:
    """The number of parameter-server tasks in `cluster_spec` (0 without one)."""
    if not cluster_spec:
        return 0
    return len(cluster_spec.as_dict().get(TaskType.PS, []))


def _count_worker(cluster_spec: Any, chief_task_type: str) -> int:
    """The number of workers, the chief (or master) included."""
    if not cluster_spec:
        raise RuntimeError("Internal error: `_count_worker` does not expect empty cluster_spec.")
    jobs = cluster_spec.as_dict()
    return len(jobs.get(TaskType.WORKER, [])) + len(jobs.get(chief_task_type, []))


def _get_global_id_in_cluster(
    cluster_spec: Any, task_type: str, task_id: int, chief_task_type: str
) -> int:
    return _global_id_in_cluster(cluster_spec, task_type, task_id, chief_task_type)


def _get_session_master(cluster_spec: Any, task_type: str, task_id: int, tf_config: dict) -> str:
    return _session_master(cluster_spec, task_type, task_id, tf_config)


def _get_eval_session_master(task_type: str, tf_config: dict) -> str:
    return _eval_session_master(task_type, tf_config)


def _get_model_dir(tf_config: dict, model_dir: Any) -> Any:
    return _model_dir_from(tf_config, model_dir)


def _validate_save_ckpt_with_replaced_keys(new_copy: RunConfig, replaced_keys: Any) -> None:
    """Raises when `replace()` set both checkpoint schedules."""
    if (
        "save_checkpoints_steps" in replaced_keys
        and "save_checkpoints_secs" in replaced_keys
        and new_copy.save_checkpoints_steps is not None
        and new_copy.save_checkpoints_secs is not None
    ):
        raise ValueError("`save_checkpoints_steps` and `save_checkpoints_secs` cannot be both set.")


def _validate_properties(run_config: RunConfig) -> None:
    """RunConfig's checks, run by making a copy with the same values."""
    run_config.replace()


def _validate_task_type_and_task_id(
    cluster_spec: Any, task_env: dict, chief_task_type: str
) -> tuple[str, int]:
    from keras_estimator.spec.run_config import _validate_task

    return _validate_task(cluster_spec, task_env, chief_task_type)
