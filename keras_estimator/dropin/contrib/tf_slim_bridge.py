"""tf-slim, the maintained copy of `tf.contrib.slim`, loaded on first use (an optional extra)."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from types import ModuleType

from keras_estimator.dropin.contrib.arg_scope import register_with_tf_slim


def tf_slim_installed() -> bool:
    """Whether the `tf_slim` package can be imported (without importing it)."""
    return importlib.util.find_spec("tf_slim") is not None


def load_tf_slim(fullname: str) -> ModuleType:
    """`tf_slim`, with our contrib layers known to its `arg_scope`; else an ImportError
    naming the extra to install."""
    if not tf_slim_installed():
        raise ModuleNotFoundError(
            f"`{fullname}` needs the tf-slim package, the maintained copy of tf.contrib.slim, "
            "which is not installed. Fix: pip install tf-slim (or keras-estimator[slim]). "
            f"Received: {fullname}",
            name="tf_slim",
        )
    tf_slim = importlib.import_module("tf_slim")
    register_with_tf_slim(sys.modules["tf_slim.ops.arg_scope"])
    return tf_slim


__all__ = ["load_tf_slim", "tf_slim_installed"]
