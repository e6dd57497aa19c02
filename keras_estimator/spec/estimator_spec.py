"""EstimatorSpec: what a `model_fn` returns, validated as tf.estimator 2.15 did."""

from __future__ import annotations

import collections
from typing import Any

import keras
import tensorflow as tf

from keras_estimator.export.export_outputs import resolve_export_outputs
from keras_estimator.spec.mode_keys import ModeKeys

_DEFAULT_GRAPH_ERROR = (
    '{0} with "{1}" must be from the default graph. Possible causes of this error include: '
    "\n\n1) {0} was created outside the context of the default graph.\n\n2) The object passed "
    'through to EstimatorSpec was not created in the most recent call to "model_fn".'
)

_FIELDS = [
    "mode",
    "predictions",
    "loss",
    "train_op",
    "eval_metric_ops",
    "export_outputs",
    "training_chief_hooks",
    "training_hooks",
    "scaffold",
    "evaluation_hooks",
    "prediction_hooks",
]


def _is_tensor(x: Any) -> bool:
    return isinstance(x, (tf.Tensor, tf.__internal__.types.Tensor))


def _check_graph(x: Any, what: str, label: str) -> None:
    if tf.executing_eagerly() or isinstance(x, keras.optimizers.Optimizer):
        return
    graph = getattr(x, "graph", None)
    if graph is not None and graph is not tf.compat.v1.get_default_graph():
        raise ValueError(
            _DEFAULT_GRAPH_ERROR.format(what, label)
            + " Expected every tensor and op of the EstimatorSpec to be built inside the "
            "model_fn call that returns it. Fix: create it there, from that call's "
            f"features/labels, not in another graph or an earlier call. Received: {what}={label!r}"
        )


def _validate_train_op(train_op: Any, mode: str) -> Any:
    if train_op is None:
        if mode == ModeKeys.TRAIN:
            raise ValueError(
                "Missing train_op. An EstimatorSpec in mode TRAIN needs one. Fix: return "
                "EstimatorSpec(mode, loss=loss, train_op=optimizer.minimize(loss, "
                "tf.compat.v1.train.get_global_step())), or a Keras optimizer as train_op. "
                f"Received: train_op=None, mode={mode!r}"
            )
        return None
    if isinstance(train_op, keras.optimizers.Optimizer):
        # keras_estimator convention: a Keras optimizer minimises `loss` over the
        # trainable variables the model_fn created.
        return train_op
    if isinstance(train_op, tf.Variable):
        return train_op
    if not isinstance(train_op, tf.Operation) and not _is_tensor(train_op):
        raise TypeError(
            f"train_op must be Operation or Tensor, given: {train_op}. Expected a tf.Operation, "
            "a Tensor or a Keras optimizer. Fix: pass optimizer.minimize(loss, global_step). "
            f"Received: type(train_op)={type(train_op).__name__}"
        )
    _check_graph(train_op, "train_op", getattr(train_op, "name", train_op))
    return train_op


def _validate_loss(loss: Any, mode: str) -> Any:
    if loss is None:
        if mode in (ModeKeys.TRAIN, ModeKeys.EVAL):
            raise ValueError(
                f"Missing loss. An EstimatorSpec in mode {mode.upper()} needs a scalar loss "
                "Tensor. Fix: pass loss=..., e.g. "
                "tf.compat.v1.losses.mean_squared_error(labels, predictions). "
                f"Received: loss=None, mode={mode!r}"
            )
        return None
    if not _is_tensor(loss):
        raise TypeError(
            f"loss must be Tensor, given: {loss}. Expected a scalar Tensor computed in the "
            "model_fn from its features and labels. Fix: return the loss op itself, not its "
            f"value. Received: type(loss)={type(loss).__name__}"
        )
    shape = loss.shape
    # tf.estimator let a loss of shape [None, 1] through and failed inside the session;
    # a known rank with a dimension that is not 1 is reported here instead.
    if shape.num_elements() not in (None, 1) or (
        shape.rank is not None and shape.num_elements() is None
    ):
        raise ValueError(
            f"Loss must be scalar, given: {loss}. Expected a scalar or a Tensor of shape [1]. "
            f"Fix: reduce it, e.g. loss = tf.reduce_mean(loss). Received: loss.shape={shape}"
        )
    _check_graph(loss, "loss", getattr(loss, "name", loss))
    if not shape.is_compatible_with(tf.TensorShape([])):
        loss = tf.reshape(loss, [])
    return loss


def _validate_predictions(predictions: Any, mode: str) -> Any:
    if predictions is None:
        if mode == ModeKeys.PREDICT:
            raise ValueError(
                "Missing predictions. An EstimatorSpec in mode PREDICT needs them. Fix: pass "
                "predictions=a Tensor or a dict of Tensors, e.g. {'classes': tf.argmax(logits, "
                "1)}. Received: predictions=None"
            )
        return {}
    if isinstance(predictions, dict):
        for key, value in predictions.items():
            if not _is_tensor(value):
                raise TypeError(
                    f"predictions[{key}] must be Tensor, given: {value}. Expected a dict of "
                    "Tensors computed in the model_fn. Fix: wrap constants with "
                    "tf.convert_to_tensor(...). "
                    f"Received: type(predictions[{key!r}])={type(value).__name__}"
                )
            _check_graph(value, "prediction values", f"{key}: {getattr(value, 'name', '')}")
        return dict(predictions)
    if not _is_tensor(predictions):
        raise TypeError(
            f"predictions must be Tensor, given: {predictions}. Expected a Tensor or a dict of "
            "Tensors computed in the model_fn. Fix: e.g. predictions={'y': tensor}. "
            f"Received: type(predictions)={type(predictions).__name__}"
        )
    _check_graph(predictions, "prediction values", getattr(predictions, "name", ""))
    return predictions


def validate_spec_hooks(hooks: Any, field: str = "hooks") -> tuple:
    hooks = tuple(hooks or [])
    for hook in hooks:
        if not isinstance(hook, tf.compat.v1.train.SessionRunHook):
            raise TypeError(
                f"All hooks must be SessionRunHook instances, given: {hook}. Expected only "
                f"tf.compat.v1.train.SessionRunHook objects in EstimatorSpec.{field}. Fix: "
                "subclass SessionRunHook, or pass Keras callbacks to train()/evaluate()'s "
                f"hooks= instead. Received: type(hook)={type(hook).__name__}"
            )
    return hooks


def _validate_eval_metric_ops(eval_metric_ops: Any) -> dict:
    if eval_metric_ops is None:
        return {}
    if not isinstance(eval_metric_ops, dict):
        raise TypeError(
            f"eval_metric_ops must be a dict, given: {eval_metric_ops}. Expected a dict of "
            "name -> (metric_value, update_op) or keras.metrics.Metric. Fix: e.g. "
            "{'accuracy': tf.compat.v1.metrics.accuracy(labels, predictions)}. "
            f"Received: type(eval_metric_ops)={type(eval_metric_ops).__name__}"
        )
    for key, value in eval_metric_ops.items():
        if isinstance(value, keras.metrics.Metric):
            continue
        if not isinstance(value, tuple) or len(value) != 2:
            raise TypeError(
                "Values of eval_metric_ops must be (metric_value, update_op) tuples, "
                f"given: {value} for key: {key}. Fix: use a tf.compat.v1.metrics function "
                "(it returns that pair) or a keras.metrics.Metric updated in the model_fn. "
                f"Received: eval_metric_ops[{key!r}]={value!r}"
            )
        for part in value:
            if not (_is_tensor(part) or isinstance(part, (tf.Operation, tf.Variable))):
                raise TypeError(
                    f"Values of eval_metric_ops must be (metric_value, update_op) tuples of "
                    f"Tensors or Operations, given: {value} for key: {key}. Fix: use a "
                    "tf.compat.v1.metrics function, which returns that pair, or a "
                    "keras.metrics.Metric. "
                    f"Received: type(part)={type(part).__name__} in eval_metric_ops[{key!r}]"
                )
            _check_graph(part, "eval_metric_ops", f"{key}: {getattr(part, 'name', '')}")
    return dict(eval_metric_ops)


def _validate_scaffold(scaffold: Any) -> Any:
    scaffold = scaffold or tf.compat.v1.train.Scaffold()
    if not isinstance(scaffold, tf.compat.v1.train.Scaffold):
        raise TypeError(
            f"scaffold must be tf.train.Scaffold. Given: {scaffold}. Fix: pass "
            "scaffold=tf.compat.v1.train.Scaffold(...) or leave it out. "
            f"Received: type(scaffold)={type(scaffold).__name__}"
        )
    return scaffold


def _validate_export_outputs(export_outputs: Any, predictions: Any, mode: str) -> Any:
    if mode == ModeKeys.PREDICT:
        # As tf.estimator: a default signature from predictions, serving_default aliasing.
        return resolve_export_outputs(export_outputs, predictions)
    if export_outputs is not None and not isinstance(export_outputs, dict):
        raise TypeError(
            f"export_outputs must be dict, given: {export_outputs}. Expected a dict of "
            "signature name -> ExportOutput. Fix: e.g. {'serving_default': "
            "tf.estimator.export.PredictOutput(predictions)}. "
            f"Received: type(export_outputs)={type(export_outputs).__name__}"
        )
    return export_outputs


def _is_default_scaffold(scaffold: Any) -> bool:
    return not any(
        getattr(scaffold, attr, None) is not None
        for attr in ("_saver", "_init_fn", "_init_op", "_ready_op", "_local_init_op")
    )


class EstimatorSpec(collections.namedtuple("EstimatorSpec", _FIELDS)):
    """Ops and objects returned from a `model_fn` and passed to an `Estimator`.

    Validation follows tf.estimator 2.15: TRAIN needs `loss` and `train_op`, EVAL needs
    `loss`, PREDICT needs `predictions`; `loss` must be a scalar tensor; hooks must be
    `SessionRunHook`s; `eval_metric_ops` maps names to `(value, update_op)` pairs or to
    `keras.metrics.Metric` objects updated inside the model_fn.

    keras_estimator also accepts a Keras 3 optimizer as `train_op`: the engine then
    minimises `loss` with it over the trainable variables the model_fn created.

    Example:
        >>> def model_fn(features, labels, mode):
        ...     logits = tf.compat.v1.layers.dense(features["x"], 2)
        ...     loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
        ...     opt = tf.compat.v1.train.GradientDescentOptimizer(0.1)
        ...     train_op = opt.minimize(loss, tf.compat.v1.train.get_global_step())
        ...     return EstimatorSpec(mode, loss=loss, train_op=train_op)
    """

    def __new__(
        cls,
        mode: str,
        predictions: Any = None,
        loss: Any = None,
        train_op: Any = None,
        eval_metric_ops: dict | None = None,
        export_outputs: dict | None = None,
        training_chief_hooks: Any = None,
        training_hooks: Any = None,
        scaffold: Any = None,
        evaluation_hooks: Any = None,
        prediction_hooks: Any = None,
    ) -> EstimatorSpec:
        if mode not in (ModeKeys.TRAIN, ModeKeys.EVAL, ModeKeys.PREDICT):
            raise ValueError(
                "mode must be one of ModeKeys.TRAIN, EVAL or PREDICT, but it is not. Fix: pass "
                f"the mode the model_fn received. Received: mode={mode!r}"
            )
        return super().__new__(
            cls,
            mode=mode,
            predictions=_validate_predictions(predictions, mode),
            loss=_validate_loss(loss, mode),
            train_op=_validate_train_op(train_op, mode),
            eval_metric_ops=_validate_eval_metric_ops(eval_metric_ops),
            export_outputs=_validate_export_outputs(export_outputs, predictions, mode),
            training_chief_hooks=validate_spec_hooks(training_chief_hooks, "training_chief_hooks"),
            training_hooks=validate_spec_hooks(training_hooks, "training_hooks"),
            scaffold=_validate_scaffold(scaffold),
            evaluation_hooks=validate_spec_hooks(evaluation_hooks, "evaluation_hooks"),
            prediction_hooks=validate_spec_hooks(prediction_hooks, "prediction_hooks"),
        )

    def __repr__(self) -> str:
        """The mode and the fields that are set (not None or empty)."""
        shown = [f"mode={self.mode!r}"] + [
            f"{name}={value!r}"
            for name, value in zip(self._fields[1:], self[1:])
            if value is not None
            and not (isinstance(value, dict | tuple | list) and not value)
            and not (name == "scaffold" and _is_default_scaffold(value))
        ]
        return f"EstimatorSpec({', '.join(shown)})"

    def _replace(self, **kwds: Any) -> EstimatorSpec:
        if "mode" in kwds and self.mode != kwds["mode"]:
            raise ValueError(
                "mode of EstimatorSpec cannot be changed. Fix: build a new EstimatorSpec for "
                f"the other mode. Received: mode={kwds['mode']!r} for a spec in mode {self.mode!r}"
            )
        fields = {name: kwds.pop(name, value) for name, value in zip(self._fields, self)}
        if kwds:
            raise ValueError(
                f"Got unexpected field names: {sorted(kwds)}. Expected only EstimatorSpec's "
                f"fields: {', '.join(self._fields)}."
            )
        return EstimatorSpec(**fields)
