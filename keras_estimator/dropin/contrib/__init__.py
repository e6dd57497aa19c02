"""`tf.contrib` for legacy estimator scripts: its estimator-adjacent pieces, measured.

`install()` puts this package at `tf.compat.v1.contrib` (and `tensorflow.contrib` for
`from tensorflow.contrib import layers`). It provides `tpu`, `cluster_resolver`, `data`,
`distribute` (MirroredStrategy / OneDeviceStrategy for RunConfig), `estimator` (BoostedTrees'
in-memory trainers), `layers`, `framework`, `training` (HParams), `metrics`, `rnn`,
`factorization` (KMeansClustering), `summary` (for TPU host_calls), and `slim` when the
tf-slim package is installed. Every other part of `tf.contrib` raises an error naming the
replacement; `keras-estimator check` lists the same facts.

Example:
    >>> import keras_estimator; keras_estimator.install()
    >>> import tensorflow.compat.v1 as tf
    >>> w = tf.get_variable("w", [784, 10], initializer=tf.contrib.layers.xavier_initializer())
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

from keras_estimator.dropin.contrib.removed import removed_module_message

PROVIDED = ("cluster_resolver", "data", "distribute", "eager", "estimator", "factorization",
            "framework", "layers", "lookup", "metrics", "rnn", "slim", "summary", "training",
            "tpu")  # fmt: skip


def submodules() -> dict[str, ModuleType]:
    """`tensorflow.contrib.<name>` -> our module, for each part importable now (`slim`
    only with tf-slim installed)."""
    from keras_estimator.dropin.contrib.tf_slim_bridge import tf_slim_installed

    names = [n for n in PROVIDED if n != "slim" or tf_slim_installed()]
    modules = {f"tensorflow.contrib.{n}": importlib.import_module(_module_of(n)) for n in names}
    # Inner module paths TF1 code imported directly (`from tensorflow.contrib.tpu.python.tpu
    # import tpu_config` in tensorflow/tpu, t2t, XLNet), and the packages above them.
    for path, ours in INNER_MODULES.items():
        parts = path.split(".")
        for end in range(3, len(parts)):
            package = ".".join(parts[:end])
            if package not in modules:
                modules[package] = ModuleType(package, f"keras_estimator's `{package}`.")
                modules[package].__path__ = []
        modules[path] = importlib.import_module(ours)
    return modules


INNER_MODULES = {
    "tensorflow.contrib.tpu.python.tpu.tpu_config": "keras_estimator.tpu.tpu_config",
    "tensorflow.contrib.tpu.python.tpu.tpu_estimator": "keras_estimator.tpu",
    "tensorflow.contrib.training.python.training.hparam": f"{__name__}.hparams",
}


def _module_of(name: str) -> str:
    # slim's module has another name: importing it must not set `contrib.slim` for good,
    # which is there only while tf-slim is installed.
    return f"{__name__}.slim_namespace" if name == "slim" else f"{__name__}.{name}"


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    if name in PROVIDED:
        if name == "slim":
            from keras_estimator.dropin.contrib.tf_slim_bridge import tf_slim_installed

            if not tf_slim_installed():
                raise AttributeError(removed_module_message("tensorflow.contrib.slim"))
        return importlib.import_module(_module_of(name))
    raise AttributeError(removed_module_message(f"tensorflow.contrib.{name}"))


def __dir__() -> list[str]:
    return sorted(PROVIDED)


__all__ = ["PROVIDED", "submodules"]
