"""`tf.contrib.slim` through the maintained tf-slim package (`pip install tf-slim`, or the
keras-estimator `slim` extra).

Every name is tf-slim's, except the layers, initializers and regularizers that
`tf.contrib.layers` provides here (`conv2d`, `fully_connected`, `batch_norm`, ...):
those are ours, so they work in a model_fn under Keras 3 with TF1 variable names (tf-slim's
own `batch_norm` needs tf_keras), and tf-slim's `arg_scope` applies to them.
"""

from __future__ import annotations

from typing import Any

from keras_estimator.dropin.contrib import layers as _layers
from keras_estimator.dropin.contrib.tf_slim_bridge import load_tf_slim

_OURS = set(_layers.__all__)


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    if name in _OURS:
        return getattr(_layers, name)
    return getattr(load_tf_slim(f"tensorflow.contrib.slim.{name}"), name)


def __dir__() -> list[str]:
    return sorted(_OURS | {n for n in dir(load_tf_slim("tensorflow.contrib.slim"))
                           if not n.startswith("_")})  # fmt: skip
