"""RunConfig.session_config (a tf.compat.v1.ConfigProto) mapped onto tf.config."""

from __future__ import annotations

import logging
from typing import Any

import tensorflow as tf

from keras_estimator.seam import internals

logger = logging.getLogger("keras_estimator")


def _threads(setter: Any, getter: Any, value: int, name: str, ignored: list[str]) -> None:
    if getter() == value:
        return
    try:
        setter(value)
    except RuntimeError:  # the TF runtime is already initialised in this process
        ignored.append(f"{name} (TensorFlow has already started; set it before any TF op)")


def _visible_gpus(value: str, ignored: list[str]) -> None:
    """gpu_options.visible_device_list ("0,2": the GPUs this process uses, by index)."""
    gpus = tf.config.list_physical_devices("GPU")
    if not gpus:
        return
    try:
        indices = [int(i) for i in value.split(",") if i.strip()]
    except ValueError:
        indices = [-1]
    if not indices or any(not 0 <= i < len(gpus) for i in indices):
        raise ValueError(
            "RunConfig.session_config gpu_options.visible_device_list names GPUs this machine "
            f"does not have. Expected comma-separated indices below {len(gpus)}. Fix: pass "
            f'e.g. visible_device_list="0". Received: visible_device_list={value!r}'
        )
    try:
        tf.config.set_visible_devices([gpus[i] for i in indices], "GPU")
    except RuntimeError:
        ignored.append("gpu_options.visible_device_list (GPUs already initialised)")


def apply_session_config(config: Any) -> None:
    """Honours what TF 2 can honour of a ConfigProto; warns once about the rest.

    Mapped: inter/intra_op_parallelism_threads -> tf.config.threading,
    allow_soft_placement -> tf.config.set_soft_device_placement,
    log_device_placement -> tf.debugging.set_log_device_placement,
    gpu_options.allow_growth -> tf.config.experimental.set_memory_growth,
    gpu_options.visible_device_list -> tf.config.set_visible_devices,
    gpu_options.per_process_gpu_memory_fraction -> the eager context's GPU options.
    GPU settings take effect only before TensorFlow first uses the GPUs.

    Example:
        >>> apply_session_config(tf.compat.v1.ConfigProto(intra_op_parallelism_threads=2))
    """
    if config is None:
        return
    ignored: list[str] = []
    for field, value in config.ListFields():
        name = field.name
        if name == "inter_op_parallelism_threads":
            threading = tf.config.threading
            _threads(threading.set_inter_op_parallelism_threads,
                     threading.get_inter_op_parallelism_threads, value, name, ignored)  # fmt: skip
        elif name == "intra_op_parallelism_threads":
            threading = tf.config.threading
            _threads(threading.set_intra_op_parallelism_threads,
                     threading.get_intra_op_parallelism_threads, value, name, ignored)  # fmt: skip
        elif name == "allow_soft_placement":
            tf.config.set_soft_device_placement(value)
        elif name == "log_device_placement":
            tf.debugging.set_log_device_placement(value)
        elif name == "gpu_options":
            for gpu_field, gpu_value in value.ListFields():
                if gpu_field.name == "allow_growth":
                    for gpu in tf.config.list_physical_devices("GPU"):
                        try:
                            tf.config.experimental.set_memory_growth(gpu, gpu_value)
                        except RuntimeError:
                            ignored.append("gpu_options.allow_growth (GPUs already initialised)")
                elif gpu_field.name == "per_process_gpu_memory_fraction":
                    if tf.config.list_physical_devices("GPU"):
                        try:
                            internals.set_gpu_memory_fraction(gpu_value)
                        except RuntimeError:
                            ignored.append(f"gpu_options.{gpu_field.name} (GPUs already "
                                           "initialised)")  # fmt: skip
                elif gpu_field.name == "visible_device_list":
                    _visible_gpus(gpu_value, ignored)
                else:
                    ignored.append(f"gpu_options.{gpu_field.name}")
        else:
            ignored.append(name)
    if ignored:
        logger.warning(
            "RunConfig.session_config: not applied on TF 2 (ignored): %s.", ", ".join(ignored)
        )
