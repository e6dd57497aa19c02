"""2.15's `head/multi_head`: `tf.estimator.MultiHead`."""

from __future__ import annotations

from typing import Any

import tensorflow as tf

from keras_estimator.canned.heads.multi_head import MultiHead
from keras_estimator.export.export_outputs import PredictOutput

__all__ = ["MultiHead"]


def _no_op_train_fn(loss: Any) -> Any:
    """A train_op_fn that trains nothing (MultiHead's heads' own train ops are unused)."""
    del loss
    return tf.no_op()


def _default_export_output(export_outputs: dict, head_name: str) -> Any:
    """The head's default export output: its `serving_default`, else its only one, else a
    PredictOutput of every output."""
    if "serving_default" in export_outputs:
        return export_outputs["serving_default"]
    if len(export_outputs) == 1:
        return next(iter(export_outputs.values()))
    for output in export_outputs.values():
        if isinstance(output, PredictOutput):
            return output
    raise ValueError(f"{head_name} did not specify default export_outputs. Given: {export_outputs}")
