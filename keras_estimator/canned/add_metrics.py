"""`add_metrics`: an Estimator like another one, with more evaluation metrics."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from keras_estimator.estimator.estimator import Estimator
from keras_estimator.spec.mode_keys import ModeKeys
from keras_estimator.utils.fn_args import fn_args

_METRIC_FN_ARGS = ("labels", "predictions", "features", "config")


def _call_with_its_args(fn: Callable, available: dict) -> Any:
    return fn(**{name: value for name, value in available.items() if name in fn_args(fn)})


def add_metrics(estimator: Estimator, metric_fn: Callable) -> Estimator:
    """A new Estimator evaluating `metric_fn`'s metrics besides the estimator's own.

    `metric_fn` takes any of `labels`, `predictions`, `features`, `config` by name and
    returns `{name: metric}`: `(value, update_op)` pairs or Keras metrics it updated. A
    name the estimator already reports is replaced. The new Estimator shares model_dir.

    Example:
        >>> def my_auc(labels, predictions):
        ...     auc = keras.metrics.AUC(); auc.update_state(labels, predictions["logistic"])
        ...     return {"my_auc": auc}
        >>> est = add_metrics(est, my_auc)
    """
    if not callable(metric_fn):
        raise TypeError(f"unsupported callable: metric_fn must be callable, given {metric_fn!r}")
    unexpected = sorted(set(fn_args(metric_fn)) - set(_METRIC_FN_ARGS))
    if unexpected:
        raise ValueError(f"metric_fn ({metric_fn}) has following not expected args: {unexpected}")
    model_fn = estimator.model_fn

    def new_model_fn(features, labels, mode, params, config):
        spec = _call_with_its_args(
            model_fn,
            {"features": features, "labels": labels, "mode": mode, "params": params,
             "config": config},
        )  # fmt: skip
        if mode != ModeKeys.EVAL:
            return spec
        extra = _call_with_its_args(
            metric_fn,
            {"labels": labels, "predictions": spec.predictions, "features": features,
             "config": config},
        )  # fmt: skip
        return spec._replace(eval_metric_ops={**spec.eval_metric_ops, **dict(extra)})

    return Estimator(
        new_model_fn, model_dir=estimator.model_dir, config=estimator.config,
        params=estimator.params,
    )  # fmt: skip
