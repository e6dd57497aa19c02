"""TF1 switches a legacy script calls, under `install()` (and so `keras-estimator run`).

TF1-era scripts often start with `tf.compat.v1.disable_v2_behavior()` (or
`disable_eager_execution()`, `disable_resource_variables()`, `disable_v2_tensorshape()`).
keras_estimator runs a model_fn inside a compiled Keras step, which needs eager execution
outside it and resource variables; tf.estimator built TF1 graphs of its own, which these
switches were for. After `install()`, the four functions of `tf.compat.v1` apply what is
harmless (TF1 shapes, where `shape[-1]` is a `Dimension` with `.value`, for the calling
script tree or module: `dropin.tf1_shapes`), keep the rest of TensorFlow 2's behaviour,
and say so in one log line naming the caller. `disable_v2_behavior` /
`disable_eager_execution` also give model_to_estimator's metrics tf.keras 2's graph-mode
names (`keras_bridge.metric_names`), as 2.15 reported them after those calls.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable
from typing import Any

from keras_estimator.dropin.tf1_shapes import give_tf1_shapes_to_caller
from keras_estimator.keras_bridge.metric_names import ask_for_graph_mode_names
from keras_estimator.utils.log import LOGGER_NAME

logger = logging.getLogger(LOGGER_NAME)

SWITCHES = (
    "disable_v2_behavior",
    "disable_eager_execution",
    "disable_v2_tensorshape",
    "disable_resource_variables",
)

_KEPT = (
    "eager execution and resource variables stay on (keras_estimator's training step needs them)"
)
_WHAT_IS_DONE = {
    "disable_v2_behavior": "TF1 tensor shapes (Dimension, `.value`) applied for {who}; "
    + _KEPT
    + ", and so do TF2 control flow, tensor equality, tf.data and tf.distribute (a "
    "strategy's experimental_distribute_dataset is TF2's DistributedDataset: iterate it; "
    "make_initializable_iterator and tf.compat.v1.Session loops need graph mode)",
    "disable_eager_execution": "not applied: " + _KEPT,
    "disable_resource_variables": "not applied: " + _KEPT,
    "disable_v2_tensorshape": "TF1 tensor shapes (Dimension, `.value`) applied for {who} "
    "(TensorFlow, Keras and keras_estimator keep TF2 shapes)",
}
_SHAPES = ("disable_v2_behavior", "disable_v2_tensorshape")
# The switches that made tf.keras 2 compile in graph mode (its metric names differ there).
_GRAPH_MODE = ("disable_v2_behavior", "disable_eager_execution")


def _switch(name: str) -> Callable[[], None]:
    def switch() -> None:
        caller = sys._getframe(1)
        who = give_tf1_shapes_to_caller(caller) if name in _SHAPES else ""
        if name in _GRAPH_MODE:
            ask_for_graph_mode_names(True)
        where = f"{os.path.basename(caller.f_code.co_filename)}:{caller.f_lineno}"
        level = logging.INFO if name == "disable_v2_tensorshape" else logging.WARNING
        logger.log(level, "tf.compat.v1.%s() called at %s under keras_estimator: %s.",
                   name, where, _WHAT_IS_DONE[name].format(who=who))  # fmt: skip

    switch.__name__ = switch.__qualname__ = name
    switch.__doc__ = f"keras_estimator's `{name}`: {_WHAT_IS_DONE[name].format(who='the caller')}."
    return switch


def switch_attributes() -> list[tuple[Any, str, Any]]:
    """(module, name, replacement) for the four switches on every `compat.v1` module, and
    on the private modules that define them."""
    import tensorflow as tf

    from keras_estimator.seam.internals import tf1_switch_modules

    modules = {id(tf.compat.v1): tf.compat.v1}
    modules.update({id(m): m for n, m in list(sys.modules.items()) if n.endswith("compat.v1")})
    # The switches' own modules too: some code imports them from TensorFlow's private path.
    modules.update({id(m): m for m in tf1_switch_modules()})
    replacements = {name: _switch(name) for name in SWITCHES}
    return [
        (module, name, replacements[name])
        for module in modules.values()
        for name in SWITCHES
        if hasattr(module, name)
    ]
