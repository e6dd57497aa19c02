"""TPUEstimatorSpec: what a TPUEstimator model_fn returns, and its EstimatorSpec off TPU."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import tensorflow as tf

from keras_estimator.spec.estimator_spec import EstimatorSpec, validate_spec_hooks
from keras_estimator.utils.fn_args import fn_args


def _validate_host_call(name: str, host_call: Any) -> None:
    """`(fn, tensors)` with tensors a list (matching fn's arguments) or a dict."""
    if not isinstance(host_call, (tuple, list)):
        raise ValueError(f"{name} should be tuple or list")
    if len(host_call) != 2:
        raise ValueError(f"{name} should have two elements.")
    fn, tensors = host_call
    if not callable(fn):
        raise TypeError(f"{name}[0] should be callable.")
    if not isinstance(tensors, (tuple, list, dict)):
        raise ValueError(f"{name}[1] should be tuple or list, or dict.")
    if isinstance(tensors, (tuple, list)):
        has_varargs = any(
            p.kind is inspect.Parameter.VAR_POSITIONAL
            for p in inspect.signature(fn).parameters.values()
        )
        if not has_varargs and len(tensors) != len(fn_args(fn)):
            raise RuntimeError(
                f"In TPUEstimatorSpec.{name}, length of tensors {len(tensors)} does not match "
                f"method args of the function, which takes {len(fn_args(fn))}."
            )


def _call_host_fn(host_call: Any) -> Any:
    fn, tensors = host_call
    if isinstance(tensors, dict):
        return fn(**tensors)
    return fn(*tensors)


class _TPUEstimatorSpecFields(NamedTuple):
    """TPUEstimatorSpec's fields, in tf.estimator's order (no defaults:
    `TPUEstimatorSpec.__new__` has them, and validates)."""

    mode: str
    predictions: Any  # a Tensor or a dict of them, as the model_fn gave it (or None)
    loss: tf.Tensor | None
    train_op: Any  # as EstimatorSpec's train_op (an Operation, a Tensor, ...)
    # (metric_fn, tensors): a tuple or list, tensors a list (metric_fn's arguments) or a dict
    eval_metrics: Sequence[Any] | None
    export_outputs: dict[str, Any] | None
    scaffold_fn: Callable[[], tf.compat.v1.train.Scaffold] | None
    host_call: Sequence[Any] | None  # (fn, tensors), as eval_metrics
    training_hooks: tuple[tf.compat.v1.train.SessionRunHook, ...]
    evaluation_hooks: tuple[tf.compat.v1.train.SessionRunHook, ...]
    prediction_hooks: tuple[tf.compat.v1.train.SessionRunHook, ...]


class TPUEstimatorSpec(_TPUEstimatorSpecFields):
    """Ops and objects returned from a TPUEstimator `model_fn`.

    `eval_metrics=(metric_fn, tensors)`: `metric_fn(*tensors)` (or `**tensors` for a dict)
    returns the `eval_metric_ops`. `host_call=(fn, tensors)` runs `fn` on every training
    step (typically to write summaries). `scaffold_fn()` returns the Scaffold and is where
    BERT-style code calls `init_from_checkpoint`.

    Example:
        >>> def metric_fn(labels, logits):
        ...     return {"accuracy": tf.compat.v1.metrics.accuracy(labels, tf.argmax(logits, 1))}
        >>> TPUEstimatorSpec(mode, loss=loss, eval_metrics=(metric_fn, [labels, logits]))
    """

    def __new__(
        cls,
        mode: str,
        predictions: Any = None,
        loss: tf.Tensor | None = None,
        train_op: Any = None,
        eval_metrics: Sequence[Any] | None = None,
        export_outputs: dict[str, Any] | None = None,
        scaffold_fn: Callable[[], tf.compat.v1.train.Scaffold] | None = None,
        host_call: Sequence[Any] | None = None,
        training_hooks: Any = None,
        evaluation_hooks: Any = None,
        prediction_hooks: Any = None,
    ) -> TPUEstimatorSpec:
        if eval_metrics is not None:
            _validate_host_call("eval_metrics", eval_metrics)
        if host_call is not None:
            _validate_host_call("host_call", host_call)
        return super().__new__(
            cls,
            mode=mode,
            predictions=predictions,
            loss=loss,
            train_op=train_op,
            eval_metrics=eval_metrics,
            export_outputs=export_outputs,
            scaffold_fn=scaffold_fn,
            host_call=host_call,
            training_hooks=validate_spec_hooks(training_hooks, "training_hooks"),
            evaluation_hooks=validate_spec_hooks(evaluation_hooks, "evaluation_hooks"),
            prediction_hooks=validate_spec_hooks(prediction_hooks, "prediction_hooks"),
        )

    def as_estimator_spec(self) -> EstimatorSpec:
        """The equivalent EstimatorSpec, as TPUEstimator built it to run off TPU.

        The host_call's ops join the train_op, so they run on every training step inside
        the compiled step; in evaluation and prediction a hook runs them on every step
        (TPUEstimator fetched them through a hook on every step in all modes).
        """
        eval_metric_ops = _call_host_fn(self.eval_metrics) if self.eval_metrics else None
        train_op = self.train_op
        hooks: tuple[tf.compat.v1.train.SessionRunHook, ...] = ()
        if self.host_call is not None:
            host_ops = [
                op for op in tf.nest.flatten(_call_host_fn(self.host_call)) if op is not None
            ]
            if self.mode == "train" and host_ops:
                train_op = tf.group(train_op, *host_ops)  # inside the compiled step
            elif host_ops:
                hooks = (_HostCallHook(host_ops),)  # every eval / predict step, as TPUEstimator
        scaffold = self.scaffold_fn() if self.scaffold_fn else None
        return EstimatorSpec(
            mode=self.mode,
            predictions=self.predictions,
            loss=self.loss,
            train_op=train_op,
            eval_metric_ops=eval_metric_ops,
            export_outputs=self.export_outputs,
            scaffold=scaffold,
            training_hooks=self.training_hooks,
            evaluation_hooks=self.evaluation_hooks + hooks,
            prediction_hooks=self.prediction_hooks + hooks,
        )


class _HostCallHook(tf.compat.v1.train.SessionRunHook):
    """Runs a host_call's ops on every evaluation or prediction step."""

    def __init__(self, ops: list) -> None:
        self._ops = ops

    def before_run(self, run_context: Any) -> Any:
        return tf.compat.v1.train.SessionRunArgs(self._ops)
