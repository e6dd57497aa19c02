"""tf-slim, the maintained copy of `tf.contrib.slim`, loaded on first use (an optional extra).

tf-slim 1.1 calls `control_flow_ops.cond`, `case` and `while_loop` of
`tensorflow.python.ops` (its TFExampleDecoder's image decoding, its layers and evaluation
loops), which TensorFlow 2.13 moved out of that module: `install()` puts TF1's
`tf.compat.v1.cond` / `case` / `while_loop` (the same functions) back there.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from types import ModuleType
from typing import Any

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


def control_flow_attributes() -> list[tuple[Any, str, Any]]:
    """(owner, attribute, value) for `install()`: `control_flow_ops.cond` / `case` /
    `while_loop` as TF 1.x had them, where TensorFlow no longer defines them."""
    import tensorflow as tf

    from keras_estimator.seam.internals import control_flow_ops_module

    module = control_flow_ops_module()
    v1 = tf.compat.v1
    moved = {"cond": v1.cond, "case": v1.case, "while_loop": v1.while_loop}
    return [(module, name, value) for name, value in moved.items() if not hasattr(module, name)]


__all__ = ["control_flow_attributes", "load_tf_slim", "tf_slim_installed"]
