"""2.15's `estimator`: `Estimator` is the v1 class (`tf.compat.v1.estimator.Estimator`),
`EstimatorV2` `tf.estimator.Estimator`, as in 2.15's module."""

from __future__ import annotations

import os
from typing import Any

import tensorflow as tf

from keras_estimator.checkpoint.warm_start import WarmStartSettings
from keras_estimator.dropin.unavailable import unavailable_function
from keras_estimator.estimator.estimator import Estimator as EstimatorV2
from keras_estimator.estimator.estimator_v1 import Estimator
from keras_estimator.runtime.model_fn_call import verify_model_fn_args
from keras_estimator.spec.estimator_spec import validate_spec_hooks

_V1 = tf.compat.v1

__all__ = [
    "Estimator",
    "EstimatorV2",
    "WarmStartSettings",
    "create_per_replica_ready_for_local_init_op",
    "maybe_overwrite_model_dir_and_session_config",
]


def _verify_model_fn_args(model_fn: Any, params: Any) -> None:
    verify_model_fn_args(model_fn, params)


def _check_hooks_type(hooks: Any) -> list:
    """`hooks` as a list, each a SessionRunHook (2.15's TypeError otherwise)."""
    return list(validate_spec_hooks(hooks or []))


def _check_listeners_type(saving_listeners: Any) -> list:
    listeners = list(saving_listeners or [])
    for listener in listeners:
        if not isinstance(listener, _V1.train.CheckpointSaverListener):
            raise TypeError(
                f"saving_listeners must be a list of CheckpointSaverListener, given: {listener}"
            )
    return listeners


def _dict_to_str(dictionary: dict) -> str:
    """`k1 = v1, k2 = v2`, sorted by key, skipping non-scalar values (2.15's log format)."""
    return ", ".join(
        f"{k} = {v}" for k, v in sorted(dictionary.items()) if not isinstance(v, bytes)
    )


def _load_global_step_from_checkpoint_dir(checkpoint_dir: str) -> int:
    """The global step of the latest checkpoint in `checkpoint_dir`, 0 when none."""
    try:
        reader = tf.train.load_checkpoint(checkpoint_dir)
        return int(reader.get_tensor(_V1.GraphKeys.GLOBAL_STEP))
    except Exception:  # noqa: BLE001 - 2.15 returned 0 for any unreadable directory
        return 0


def _check_checkpoint_available(model_dir: str) -> None:
    if not tf.train.latest_checkpoint(model_dir):
        raise ValueError(f"Could not find trained model in model_dir: {model_dir}.")


def _write_dict_to_summary(output_dir: str, dictionary: dict, current_global_step: int) -> None:
    """Writes the scalar values of `dictionary` as summaries in `output_dir`."""
    writer = tf.summary.create_file_writer(output_dir)
    with writer.as_default():
        for key, value in dictionary.items():
            if key == "global_step":
                continue
            try:
                tf.summary.scalar(key, float(value), step=current_global_step)
            except (TypeError, ValueError):
                continue
    writer.flush()


def _write_checkpoint_path_to_summary(
    output_dir: str, checkpoint_path: str, current_global_step: int
) -> None:
    writer = tf.summary.create_file_writer(output_dir)
    with writer.as_default():
        tf.summary.text("checkpoint_path", checkpoint_path, step=current_global_step)
    writer.flush()


def _get_default_warm_start_settings(warm_start_from: Any) -> Any:
    """`warm_start_from` (a path or WarmStartSettings) as WarmStartSettings, or None."""
    if warm_start_from is None:
        return None
    if isinstance(warm_start_from, str | bytes | os.PathLike):
        path = os.fspath(warm_start_from)
        path = path.decode() if isinstance(path, bytes) else path
        if tf.io.gfile.isdir(os.path.join(path, "variables")) and tf.io.gfile.exists(
            os.path.join(path, "saved_model.pb")
        ):
            path = os.path.join(path, "variables", "variables")
        return WarmStartSettings(ckpt_to_initialize_from=path)
    if isinstance(warm_start_from, WarmStartSettings):
        return warm_start_from
    raise ValueError(
        f"warm_start_from must be a string or a WarmStartSettings, instead got "
        f"{type(warm_start_from)}"
    )


def maybe_overwrite_model_dir_and_session_config(config: Any, model_dir: Any) -> Any:
    """`config` (a RunConfig, or None for the default) with `model_dir` resolved as the
    Estimator's constructor resolves it: the argument, else the config's, else a temporary
    directory; both set and different is an error."""
    from keras_estimator.estimator.estimator import _resolve_config

    return _resolve_config(config, model_dir)


create_per_replica_ready_for_local_init_op = unavailable_function(
    "estimator.create_per_replica_ready_for_local_init_op",
    "it builds a TF1 Scaffold's ready op for a tf.compat.v1.Session under a distribution "
    "strategy, and keras_estimator runs no sessions",
    "pass RunConfig(train_distribute=strategy); keras_estimator initializes each replica",
)
