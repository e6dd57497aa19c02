"""ExportOutput classes: what one serving signature returns, as `tf.estimator.export.*Output`.

Each output turns the receiver's tensors into one signature: a method name, named inputs
and named outputs. An output that cannot serve a receiver (a classification over anything
but one string tensor of serialized examples) raises ValueError there; the exporter then
leaves that signature out, as tf.estimator did.
"""

from __future__ import annotations

import abc
from typing import Any, NamedTuple

import tensorflow as tf

CLASSIFY_METHOD = "tensorflow/serving/classify"
REGRESS_METHOD = "tensorflow/serving/regress"
PREDICT_METHOD = "tensorflow/serving/predict"


class Signature(NamedTuple):
    method_name: str
    inputs: dict[str, tf.Tensor]
    outputs: dict[str, tf.Tensor]


def _is_tensor(value: Any) -> bool:
    return isinstance(value, tf.Tensor)


class ExportOutput(abc.ABC):
    """One serving signature's outputs. Subclasses say how they meet the receiver."""

    @abc.abstractmethod
    def signature(self, receiver_tensors: dict[str, tf.Tensor]) -> Signature:
        """The signature over `receiver_tensors`; ValueError when it cannot serve them."""

    def as_signature_def(self, receiver_tensors: Any) -> Any:
        """The `SignatureDef` proto of `signature(receiver_tensors)`, as tf.estimator's.

        `receiver_tensors` is a dict of name to graph Tensor, or one Tensor (named
        `input`); the tensors must be graph tensors (build them in a `tf.Graph`).
        """
        if not isinstance(receiver_tensors, dict):
            receiver_tensors = {"input": receiver_tensors}
        method_name, inputs, outputs = self.signature(receiver_tensors)
        info = tf.compat.v1.saved_model.utils.build_tensor_info
        return tf.compat.v1.saved_model.signature_def_utils.build_signature_def(
            inputs={key: info(tensor) for key, tensor in inputs.items()},
            outputs={key: info(tensor) for key, tensor in outputs.items()},
            method_name=method_name,
        )


def _single_string_input(receiver_tensors: dict[str, tf.Tensor], kind: str) -> tf.Tensor:
    examples = list(receiver_tensors.values())
    if len(examples) != 1 or examples[0].dtype != tf.string:
        raise ValueError(
            f"{kind} signatures can only accept a single tensor input of type tf.string "
            "(serialized tf.train.Example protos), received: "
            f"{ {k: v.dtype.name for k, v in receiver_tensors.items()} }. Fix: build the "
            "receiver with build_parsing_serving_input_receiver_fn, or use PredictOutput."
        )
    return examples[0]


class ClassificationOutput(ExportOutput):
    """A classification head: `scores` (float) and/or `classes` (string labels).

    Over a receiver of serialized `tf.train.Example`s it is a `classify` signature
    (inputs `inputs`; outputs `classes`, `scores`); over other receivers it is left out.

    Example:
        >>> ClassificationOutput(scores=probabilities, classes=tf.as_string(class_ids))
    """

    def __init__(self, scores: tf.Tensor | None = None, classes: tf.Tensor | None = None):
        if scores is not None and not (_is_tensor(scores) and scores.dtype.is_floating):
            raise ValueError(f"Classification scores must be a float32 Tensor; got {scores}")
        if classes is not None and not (_is_tensor(classes) and classes.dtype == tf.string):
            raise ValueError(f"Classification classes must be a string Tensor; got {classes}")
        if scores is None and classes is None:
            raise ValueError(
                "Cannot create a ClassificationOutput with empty arguments. At least one of "
                "`scores` and `classes` must be defined."
            )
        self.scores, self.classes = scores, classes

    def signature(self, receiver_tensors: dict[str, tf.Tensor]) -> Signature:
        examples = _single_string_input(receiver_tensors, "Classification")
        outputs = {"classes": self.classes, "scores": self.scores}
        return Signature(
            CLASSIFY_METHOD,
            {"inputs": examples},
            {k: v for k, v in outputs.items() if v is not None},
        )


class RegressionOutput(ExportOutput):
    """A regression head: one float `value` tensor (a `regress` signature, output `outputs`).

    Example:
        >>> RegressionOutput(value=predictions)
    """

    def __init__(self, value: tf.Tensor):
        if not (_is_tensor(value) and value.dtype.is_floating):
            raise ValueError(f"Regression output value must be a float32 Tensor; got {value}")
        self.value = value

    def signature(self, receiver_tensors: dict[str, tf.Tensor]) -> Signature:
        examples = _single_string_input(receiver_tensors, "Regression")
        return Signature(REGRESS_METHOD, {"inputs": examples}, {"outputs": self.value})


class PredictOutput(ExportOutput):
    """Any named tensors (a `predict` signature over whatever the receiver takes).

    Example:
        >>> PredictOutput({"probabilities": probabilities, "class_ids": class_ids})
    """

    def __init__(self, outputs: tf.Tensor | dict[str, tf.Tensor]):
        if not isinstance(outputs, dict):
            outputs = {"output": outputs}
        for key, value in outputs.items():
            if not isinstance(key, str):
                raise ValueError(f"Prediction output key must be a string; got {key}.")
            if not _is_tensor(value):
                raise ValueError(f"Prediction output value must be a Tensor; got {value}.")
        self.outputs = dict(outputs)

    def signature(self, receiver_tensors: dict[str, tf.Tensor]) -> Signature:
        return Signature(PREDICT_METHOD, dict(receiver_tensors), dict(self.outputs))


SUPERVISED_EVAL_METHOD = "tensorflow/supervised/eval"


def _output_key(key: Any, what: str) -> str:
    if isinstance(key, tuple):  # a MultiHead's (head, key)
        key = "/".join(key)
    if not isinstance(key, str):
        raise ValueError(f"{what} output key must be a string; got {key}.")
    return key


def _prefixed(key: str, prefix: str) -> str:
    return key if key.startswith(prefix) else f"{prefix}/{key}"


def _prefixed_outputs(outputs: Any, prefix: str) -> dict[str, tf.Tensor]:
    if not isinstance(outputs, dict):
        outputs = {prefix: outputs}
    result = {}
    for key, value in outputs.items():
        if not _is_tensor(value):
            raise ValueError(f"{prefix} output value must be a Tensor; got {value}.")
        result[_prefixed(_output_key(key, prefix), prefix)] = value
    return result


class EvalOutput(ExportOutput):
    """What a supervised evaluation computes: loss, predictions and metrics, as
    `tf.estimator.export.EvalOutput` (a `tensorflow/supervised/eval` signature).

    Output keys are prefixed with `loss`, `predictions` and `metrics` (a single tensor is
    keyed by the prefix alone; a key that already starts with it is kept); each metric
    `(value, update_op)` gives `metrics/<name>/value` and `metrics/<name>/update_op`, an
    Operation update being wrapped in an empty Tensor that runs it.

    Example:
        >>> EvalOutput(loss=loss, predictions={"classes": classes},
        ...            metrics={"accuracy": tf.compat.v1.metrics.accuracy(labels, classes)})
    """

    LOSS_NAME = "loss"
    PREDICTIONS_NAME = "predictions"
    METRICS_NAME = "metrics"
    METRIC_VALUE_SUFFIX = "value"
    METRIC_UPDATE_SUFFIX = "update_op"

    def __init__(self, loss: Any = None, predictions: Any = None, metrics: Any = None):
        self.loss = None if loss is None else _prefixed_outputs(loss, self.LOSS_NAME)
        self.predictions = (
            None if predictions is None else _prefixed_outputs(predictions, self.PREDICTIONS_NAME)
        )
        self.metrics = None if metrics is None else self._metric_outputs(metrics)

    def _metric_outputs(self, metrics: Any) -> dict[str, tf.Tensor]:
        if not isinstance(metrics, dict):
            metrics = {self.METRICS_NAME: metrics}
        outputs = {}
        for key, metric in metrics.items():
            key = _prefixed(_output_key(key, self.METRICS_NAME), self.METRICS_NAME)
            if not isinstance(metric, tuple) or len(metric) != 2:
                raise ValueError(
                    f"{key} must be a (metric_value, update_op) tuple; got {metric!r:.200}. "
                    "Keras 3 metric objects have no update op to export: pass "
                    "(metric.result(), update_op) or a tf.compat.v1.metrics.* pair."
                )
            value, update_op = metric
            if not _is_tensor(value):
                raise ValueError(f"{key} output value must be a Tensor; got {value}.")
            if not (_is_tensor(update_op) or isinstance(update_op, tf.Operation)):
                raise ValueError(f"{key} update_op must be a Tensor or Operation; got {update_op}.")
            if isinstance(update_op, tf.Operation):  # a signature holds tensors only
                with tf.control_dependencies([update_op]):
                    update_op = tf.constant([], name="metric_op_wrapper")
            outputs[f"{key}/{self.METRIC_VALUE_SUFFIX}"] = value
            outputs[f"{key}/{self.METRIC_UPDATE_SUFFIX}"] = update_op
        return outputs

    def signature(self, receiver_tensors: dict[str, tf.Tensor]) -> Signature:
        if not receiver_tensors:
            raise ValueError(f"{SUPERVISED_EVAL_METHOD} `inputs` cannot be None or empty.")
        outputs: dict[str, tf.Tensor] = {}
        for part in (self.loss, self.predictions, self.metrics):
            outputs.update(part or {})
        return Signature(SUPERVISED_EVAL_METHOD, dict(receiver_tensors), outputs)


DEFAULT_SIGNATURE = "serving_default"


def resolve_export_outputs(export_outputs: Any, predictions: Any) -> dict[str, ExportOutput]:
    """tf.estimator's rules: a default from `predictions`, and `serving_default` aliasing."""
    if export_outputs is None:
        return {DEFAULT_SIGNATURE: PredictOutput(predictions)}
    if not isinstance(export_outputs, dict):
        raise TypeError(f"export_outputs must be dict, given: {export_outputs}")
    for value in export_outputs.values():
        if not isinstance(value, ExportOutput):
            raise TypeError(
                "Values in export_outputs must be ExportOutput objects "
                "(keras_estimator.export.PredictOutput, ClassificationOutput, "
                f"RegressionOutput). Given: {export_outputs}"
            )
    resolved = dict(export_outputs)
    if len(resolved) == 1:
        ((key, value),) = resolved.items()
        resolved.setdefault(DEFAULT_SIGNATURE, value)
    elif DEFAULT_SIGNATURE not in resolved:
        raise ValueError(
            "Multiple export_outputs were provided, but none of them is specified as the "
            f"default. Do this by naming one of them with {DEFAULT_SIGNATURE!r} "
            "(tf.saved_model.DEFAULT_SERVING_SIGNATURE_DEF_KEY)."
        )
    return resolved
