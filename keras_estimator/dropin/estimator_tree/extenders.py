"""2.15's `extenders`: `add_metrics` and the metric_fn helpers it used."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from keras_estimator.canned.add_metrics import _METRIC_FN_ARGS, _call_with_its_args, add_metrics
from keras_estimator.utils.fn_args import fn_args

__all__ = ["add_metrics"]


def _verify_metric_fn_args(metric_fn: Callable) -> None:
    unexpected = sorted(set(fn_args(metric_fn)) - set(_METRIC_FN_ARGS))
    if unexpected:
        raise ValueError(f"metric_fn ({metric_fn}) has following not expected args: {unexpected}")


def _call_metric_fn(
    metric_fn: Callable, features: Any, labels: Any, predictions: Any, config: Any
) -> dict:
    """`metric_fn` called with the arguments it names, its result checked to be a dict."""
    available = {
        "features": features,
        "labels": labels,
        "predictions": predictions,
        "config": config,
    }
    result = _call_with_its_args(metric_fn, available)
    if not isinstance(result, dict):
        raise TypeError(f"metric_fn should return a dict, given: {result}")
    return result
