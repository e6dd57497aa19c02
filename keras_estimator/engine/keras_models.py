"""Keras 3 models inside a traced TF1-style step, as tf.keras 2 models behaved there.

Model_fns written for tf.keras 2 read a compiled model's `metrics` to clone or update them
one by one (TF-Ranking's keras estimator), and gather `model.get_updates_for(None)` /
`get_updates_for(features)` into the train op (TensorFlow's TF 2.0 migration guide's custom
model_fn). Keras 3 lists compile()'s metrics inside one container (which cannot be cloned or
updated as one metric) from compile() on, and has no `get_updates_for`; inside a model_fn
call `keras_models_as_tf1()` gives models tf.keras 2's surface.
"""

from __future__ import annotations

import contextlib
from typing import Any

from keras_estimator.seam import internals


def _tf_keras2_metrics(model: Any, keras3_metrics: list) -> list:
    """tf.keras 2's `Model.metrics`: compile()'s metrics one by one, not Keras 3's container,
    and they and the loss means only once fit / evaluate / a step built them (tf.keras 2
    made them then); the model's own and its layers' metrics always."""
    parts = internals.keras_compiled_parts(model)
    built = any(
        getattr(part, "built", False)
        for part in (parts.compile_metrics, parts.compile_loss)
        if part is not None
    )
    loss_means = [parts.loss_tracker]
    if parts.compile_loss is not None:
        loss_means += list(parts.compile_loss.metrics)
    listed = []
    for metric in keras3_metrics:
        if metric is parts.compile_metrics:
            listed += list(metric.metrics) if built else []
        elif any(metric is mean for mean in loss_means):
            listed += [metric] if built else []
        else:
            listed.append(metric)
    return listed


def _get_updates_for(layer: Any, inputs: Any) -> list:
    """tf.keras 2's `get_updates_for(inputs)`: the update ops the layer's calls added (batch
    normalization's moving statistics). Keras 3 layers assign those while they are called,
    inside the traced step, so there are none left to run: an empty list."""
    del layer, inputs
    return []


def keras_models_as_tf1() -> contextlib.AbstractContextManager:
    """Inside (one model_fn call), Keras 3 models behave as tf.keras 2's in a TF1 graph:
    `model.metrics` lists tf.keras 2's metrics, and `get_updates_for` exists."""
    return internals.keras_models_as_in_tf1_graph(_tf_keras2_metrics, _get_updates_for)
