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
        raise ValueError(_DEFAULT_GRAPH_ERROR.format(what, label))


def _validate_train_op(train_op: Any, mode: str) -> Any:
    if train_op is None:
        if mode == ModeKeys.TRAIN:
            raise ValueError("Missing train_op.")
        return None
    if isinstance(train_op, keras.optimizers.Optimizer):
        # keras_estimator convention: a Keras optimizer minimises `loss` over the
        # trainable variables the model_fn created.
        return train_op
    if isinstance(train_op, tf.Variable):
        return train_op
    if not isinstance(train_op, tf.Operation) and not _is_tensor(train_op):
        raise TypeError(f"train_op must be Operation or Tensor, given: {train_op}")
    _check_graph(train_op, "train_op", getattr(train_op, "name", train_op))
    return train_op


def _validate_loss(loss: Any, mode: str) -> Any:
    if loss is None:
        if mode in (ModeKeys.TRAIN, ModeKeys.EVAL):
            raise ValueError("Missing loss.")
        return None
    if not _is_tensor(loss):
        raise TypeError(f"loss must be Tensor, given: {loss}")
    shape = loss.shape
    # tf.estimator let a loss of shape [None, 1] through and failed inside the session;
    # a known rank with a dimension that is not 1 is reported here instead.
    if shape.num_elements() not in (None, 1) or (
        shape.rank is not None and shape.num_elements() is None
    ):
        raise ValueError(
            f"Loss must be scalar, given: {loss} (shape {shape}). Expected a scalar or shape "
            "[1]; reduce it, e.g. with tf.reduce_mean(loss)."
        )
    _check_graph(loss, "loss", getattr(loss, "name", loss))
    if not shape.is_compatible_with(tf.TensorShape([])):
        loss = tf.reshape(loss, [])
    return loss


def _validate_predictions(predictions: Any, mode: str) -> Any:
    if predictions is None:
        if mode == ModeKeys.PREDICT:
            raise ValueError("Missing predictions.")
        return {}
    if isinstance(predictions, dict):
        for key, value in predictions.items():
            if not _is_tensor(value):
                raise TypeError(f"predictions[{key}] must be Tensor, given: {value}")
            _check_graph(value, "prediction values", f"{key}: {getattr(value, 'name', '')}")
        return dict(predictions)
    if not _is_tensor(predictions):
        raise TypeError(f"predictions must be Tensor, given: {predictions}")
    _check_graph(predictions, "prediction values", getattr(predictions, "name", ""))
    return predictions


def validate_spec_hooks(hooks: Any, field: str = "hooks") -> tuple:
    hooks = tuple(hooks or [])
    for hook in hooks:
        if not isinstance(hook, tf.compat.v1.train.SessionRunHook):
            raise TypeError(
                f"All hooks must be SessionRunHook instances, given: {hook} (EstimatorSpec.{field})"
            )
    return hooks


def _validate_eval_metric_ops(eval_metric_ops: Any) -> dict:
    if eval_metric_ops is None:
        return {}
    if not isinstance(eval_metric_ops, dict):
        raise TypeError(f"eval_metric_ops must be a dict, given: {eval_metric_ops}")
    for key, value in eval_metric_ops.items():
        if isinstance(value, keras.metrics.Metric):
            continue
        if not isinstance(value, tuple) or len(value) != 2:
            raise TypeError(
                "Values of eval_metric_ops must be (metric_value, update_op) tuples, "
                f"given: {value} for key: {key}"
            )
        for part in value:
            if not (_is_tensor(part) or isinstance(part, (tf.Operation, tf.Variable))):
                raise TypeError(
                    f"Values of eval_metric_ops must be (metric_value, update_op) tuples of "
                    f"Tensors or Operations, given: {value} for key: {key}"
                )
            _check_graph(part, "eval_metric_ops", f"{key}: {getattr(part, 'name', '')}")
    return dict(eval_metric_ops)


def _validate_scaffold(scaffold: Any) -> Any:
    scaffold = scaffold or tf.compat.v1.train.Scaffold()
    if not isinstance(scaffold, tf.compat.v1.train.Scaffold):
        raise TypeError(f"scaffold must be tf.train.Scaffold. Given: {scaffold}")
    return scaffold


def _validate_export_outputs(export_outputs: Any, predictions: Any, mode: str) -> Any:
    if mode == ModeKeys.PREDICT:
        # As tf.estimator: a default signature from predictions, serving_default aliasing.
        return resolve_export_outputs(export_outputs, predictions)
    if export_outputs is not None and not isinstance(export_outputs, dict):
        raise TypeError(f"export_outputs must be dict, given: {export_outputs}")
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
                f"mode must be one of ModeKeys.TRAIN, EVAL or PREDICT; given: {mode!r}"
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
            raise ValueError("mode of EstimatorSpec cannot be changed.")
        fields = {name: kwds.pop(name, value) for name, value in zip(self._fields, self)}
        if kwds:
            raise ValueError(f"Got unexpected field names: {sorted(kwds)}")
        return EstimatorSpec(**fields)
