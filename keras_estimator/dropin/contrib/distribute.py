"""`tf.contrib.distribute`: the strategies TF1 estimator trainers passed to RunConfig.

TF 1.x trainers built `tf.contrib.distribute.MirroredStrategy(num_gpus=N)` (or
`num_gpus_per_worker=N`, or `devices=[...]`) and handed it to
`RunConfig(train_distribute=...)`. Here they are TensorFlow 2's `tf.distribute` strategies
over the same devices: `num_gpus=N` is GPUs 0..N-1, `num_gpus=0` the CPU, as in TF 1's
contrib (`num_gpus=1` where no GPU is visible runs on the CPU, as TF 1's soft placement did;
more GPUs than visible raise). As in tf.estimator, an input_fn's batches are per-replica
batches (what the contrib strategy did too). The rest of tf.contrib.distribute raises an
error naming its TF2 replacement.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import tensorflow as tf

from keras_estimator.dropin.contrib.removed import removed_attribute_getattr

logger = logging.getLogger("keras_estimator")

_INSTEAD = "tf.distribute strategies in RunConfig(train_distribute=...)"
_ALL_REDUCE = {"nccl": tf.distribute.NcclAllReduce,
               "hierarchical_copy": tf.distribute.HierarchicalCopyAllReduce}  # fmt: skip


def _gpu_devices(num_gpus: int, name: str) -> list[str]:
    """TF 1 contrib's device list for `num_gpus`: the CPU for 0, else GPUs 0..num_gpus-1."""
    if not isinstance(num_gpus, int) or isinstance(num_gpus, bool) or num_gpus < 0:
        raise ValueError(
            f"tf.contrib.distribute.MirroredStrategy's {name} must be a whole number of GPUs "
            f"(0 for the CPU). Fix: pass e.g. {name}=1. Received: {name}={num_gpus!r}"
        )
    if num_gpus == 0:
        return ["/device:CPU:0"]
    visible = len(tf.config.list_logical_devices("GPU"))
    if num_gpus == 1 and visible == 0:
        # TF 1's soft placement (the Estimator's default session config) ran the one replica
        # on the CPU; so does this.
        logger.warning(
            "tf.contrib.distribute.MirroredStrategy(%s=1): this process sees no GPU, so its "
            "one replica runs on the CPU (as TF 1's soft placement put it). Pass %s=0 to ask "
            "for the CPU.",
            name,
            name,
        )
        return ["/device:CPU:0"]
    if num_gpus > visible:
        # Two replicas or more on absent GPUs hang TF 2.21's all-reduce (measured): say so now.
        raise ValueError(
            f"tf.contrib.distribute.MirroredStrategy was asked for {num_gpus} GPUs but this "
            f"process sees {visible}: a strategy over GPUs that do not exist cannot place its "
            f"replicas. Fix: pass {name}=<at most {max(visible, 1)}> ({name}=0 trains on the "
            f"CPU), or make the GPUs visible (CUDA_VISIBLE_DEVICES). "
            f"Received: {name}={num_gpus}"
        )
    return [f"/device:GPU:{i}" for i in range(num_gpus)]


def _check_gpus_visible(devices: list[str]) -> None:
    """`devices=` naming more GPUs than this process sees, for more than one replica,
    raises as `num_gpus=` does (such replicas hang TF 2.21's all-reduce)."""
    gpus = [d for d in devices if "gpu" in d.lower()]
    visible = len(tf.config.list_logical_devices("GPU"))
    if len(devices) > 1 and len(gpus) > visible:
        raise ValueError(
            f"tf.contrib.distribute.MirroredStrategy was given {len(gpus)} GPU devices but "
            f"this process sees {visible} GPUs: replicas on GPUs that do not exist cannot "
            "run. Fix: list only visible devices (tf.config.list_logical_devices()), or make "
            f"the GPUs visible (CUDA_VISIBLE_DEVICES). Received: devices={devices!r}"
        )


def MirroredStrategy(  # noqa: N802 - TF 1's class name
    devices: Sequence[str] | None = None,
    num_gpus: int | None = None,
    num_gpus_per_worker: int | None = None,
    cross_device_ops: tf.distribute.CrossDeviceOps | None = None,
    auto_shard_dataset: bool = False,
    cross_tower_ops: tf.distribute.CrossDeviceOps | None = None,
) -> tf.distribute.MirroredStrategy:
    """TF 1's `tf.contrib.distribute.MirroredStrategy`, as a `tf.distribute.MirroredStrategy`
    over the same devices (`num_gpus` and `num_gpus_per_worker` are one count, give one;
    `cross_tower_ops` is the old name of `cross_device_ops`; `auto_shard_dataset` only
    concerned multi-worker training, which this single-machine strategy does not do).

    Example:
        >>> distribution = tf.contrib.distribute.MirroredStrategy(num_gpus=0)  # the CPU
        >>> config = tf.estimator.RunConfig(train_distribute=distribution)
    """
    del auto_shard_dataset
    if num_gpus is not None and num_gpus_per_worker is not None:
        raise ValueError(
            "tf.contrib.distribute.MirroredStrategy takes num_gpus or num_gpus_per_worker (the "
            "same count), not both. Fix: pass one of them. Received: "
            f"num_gpus={num_gpus!r}, num_gpus_per_worker={num_gpus_per_worker!r}"
        )
    if cross_device_ops is not None and cross_tower_ops is not None:
        raise ValueError(
            "tf.contrib.distribute.MirroredStrategy takes cross_device_ops or its old name "
            "cross_tower_ops, not both. Fix: pass cross_device_ops only. Received: "
            f"cross_device_ops={cross_device_ops!r}, cross_tower_ops={cross_tower_ops!r}"
        )
    name, count = (
        ("num_gpus", num_gpus)
        if num_gpus is not None
        else ("num_gpus_per_worker", num_gpus_per_worker)
    )
    if devices is not None and count is not None:
        raise ValueError(
            "tf.contrib.distribute.MirroredStrategy takes devices or a number of GPUs, not "
            f"both. Fix: pass devices=[...] only. Received: devices={list(devices)!r}, "
            f"{name}={count!r}"
        )
    if devices is None and count is not None:
        devices = _gpu_devices(count, name)
    elif devices is not None:
        _check_gpus_visible(list(devices))
    return tf.distribute.MirroredStrategy(
        devices=None if devices is None else list(devices),
        cross_device_ops=cross_device_ops or cross_tower_ops,
    )


def OneDeviceStrategy(device: str) -> tf.distribute.OneDeviceStrategy:  # noqa: N802
    """TF 1's `tf.contrib.distribute.OneDeviceStrategy(device)`: `tf.distribute.OneDeviceStrategy`.

    Example:
        >>> config = tf.estimator.RunConfig(
        ...     train_distribute=tf.contrib.distribute.OneDeviceStrategy("/cpu:0"))
    """
    return tf.distribute.OneDeviceStrategy(device)


def AllReduceCrossDeviceOps(  # noqa: N802 - TF 1's class name
    all_reduce_alg: str = "nccl",
    num_packs: int = 1,
    agg_small_grads_max_bytes: int = 0,
    agg_small_grads_max_group: int = 10,
) -> tf.distribute.CrossDeviceOps:
    """TF 1's `AllReduceCrossDeviceOps`: `tf.distribute.NcclAllReduce` ("nccl") or
    `tf.distribute.HierarchicalCopyAllReduce` ("hierarchical_copy"), with `num_packs`.
    TF 2 has no small-gradient aggregation: `agg_small_grads_*` are accepted and, when set,
    ignored with a warning.

    Example:
        >>> ops = tf.contrib.distribute.AllReduceCrossDeviceOps("hierarchical_copy")
    """
    if all_reduce_alg not in _ALL_REDUCE:
        raise ValueError(
            f"tf.contrib.distribute.AllReduceCrossDeviceOps supports all_reduce_alg "
            f"{sorted(_ALL_REDUCE)}. Fix: pass one of them. Received: "
            f"all_reduce_alg={all_reduce_alg!r}"
        )
    if agg_small_grads_max_bytes:
        logger.warning(
            "tf.contrib.distribute.AllReduceCrossDeviceOps: TF 2's all-reduce has no "
            "small-gradient aggregation; agg_small_grads_max_bytes=%s (and "
            "agg_small_grads_max_group=%s) are ignored.",
            agg_small_grads_max_bytes,
            agg_small_grads_max_group,
        )
    return _ALL_REDUCE[all_reduce_alg](num_packs=num_packs)


ReductionToOneDevice = tf.distribute.ReductionToOneDevice
CrossDeviceOps = tf.distribute.CrossDeviceOps
ReduceOp = tf.distribute.ReduceOp
get_replica_context = tf.distribute.get_replica_context
in_cross_replica_context = tf.distribute.in_cross_replica_context
has_distribution_strategy = tf.distribute.has_strategy
get_distribution_strategy = tf.distribute.get_strategy


__getattr__ = removed_attribute_getattr("distribute", _INSTEAD)

__all__ = [
    "AllReduceCrossDeviceOps",
    "CrossDeviceOps",
    "MirroredStrategy",
    "OneDeviceStrategy",
    "ReduceOp",
    "ReductionToOneDevice",
    "get_distribution_strategy",
    "get_replica_context",
    "has_distribution_strategy",
    "in_cross_replica_context",
]
