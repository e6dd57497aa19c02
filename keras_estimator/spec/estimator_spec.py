"""EstimatorSpec: what a `model_fn` returns, validated as tf.estimator 2.15 did."""

from __future__ import annotations

from typing import Any, NamedTuple

import keras
import tensorflow as tf

from keras_estimator.export.export_outputs import ExportOutput, resolve_export_outputs
from keras_estimator.seam import internals
from keras_estimator.seam.internals import keras_variable_backing
from keras_estimator.spec.mode_keys import ModeKeys

_DEFAULT_GRAPH_ERROR = (
    '{0} with "{1}" must be from the default graph. Possible causes of this error include: '
    "\n\n1) {0} was created outside the context of the default graph.\n\n2) The object passed "
    'through to EstimatorSpec was not created in the most recent call to "model_fn".'
)


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


def _validate_train_op(
    train_op: Any, mode: str | None
) -> tf.Operation | tf.Tensor | tf.Variable | keras.optimizers.Optimizer | None:
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
    if isinstance(train_op, tf.distribute.DistributedValues) and mode != ModeKeys.TRAIN:
        # An optimizer built in every mode, under train_distribute: outside the strategy
        # (EVAL, PREDICT) its update of the mirrored global step returns the update on each
        # device. tf.estimator ignored a train_op there (it never runs); so do we.
        train_op = tf.group(*internals.per_replica_components(train_op))
    if not isinstance(train_op, tf.Operation) and not _is_tensor(train_op):
        raise TypeError(
            f"train_op must be Operation or Tensor, given: {train_op}. Expected a tf.Operation, "
            "a Tensor or a Keras optimizer. Fix: pass optimizer.minimize(loss, global_step). "
            f"Received: type(train_op)={type(train_op).__name__}"
        )
    _check_graph(train_op, "train_op", getattr(train_op, "name", train_op))
    return train_op


def _validate_loss(loss: Any, mode: str | None) -> tf.Tensor | None:
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
    # As tf.estimator: a loss whose size is not known statically ([None, 1] from a batch)
    # is accepted; the engine reports its mean (evaluation averages its elements).
    if shape.num_elements() not in (None, 1):
        raise ValueError(
            f"Loss must be scalar, given: {loss}. Expected a scalar or a Tensor of shape [1]. "
            f"Fix: reduce it, e.g. loss = tf.reduce_mean(loss). Received: loss.shape={shape}"
        )
    _check_graph(loss, "loss", getattr(loss, "name", loss))
    if not shape.is_compatible_with(tf.TensorShape([])):
        loss = tf.reshape(loss, [])
    return loss


def _validate_predictions(predictions: Any, mode: str | None) -> tf.Tensor | dict[str, tf.Tensor]:
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


def validate_spec_hooks(
    hooks: Any, field: str = "hooks"
) -> tuple[tf.compat.v1.train.SessionRunHook, ...]:
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


_WRITE_OPS = frozenset({"AssignAddVariableOp", "AssignSubVariableOp", "AssignVariableOp"})
# Ops that may write a variable they take (control flow, function calls): counted as updates.
_CALL_OPS = frozenset(
    {"If", "StatelessIf", "While", "StatelessWhile", "PartitionedCall", "StatefulPartitionedCall"}
)


def _graph_of(x: Any) -> Any:
    try:
        return x.graph
    except (AttributeError, RuntimeError):
        return None  # an eager tensor or variable: every graph may capture it


def _in_default_graph_scope(graph: Any) -> bool:
    """`graph` is the default graph or one the default graph (a tf.function) captures from."""
    current = tf.compat.v1.get_default_graph()
    while current is not None:
        if current is graph:
            return True
        current = getattr(current, "outer_graph", None)
    return False


def _metric_handles(metric: keras.metrics.Metric) -> list | None:
    """The resource handles of the metric's variables; None when they cannot be told."""
    handles = []
    for variable in metric.variables:
        backing = keras_variable_backing(variable)
        if isinstance(backing, tf.distribute.DistributedValues):
            return None  # a replica's metric under a strategy: no check
        handle = getattr(backing, "handle", None)
        if handle is None or not hasattr(backing, "initializer"):
            return None  # e.g. a distributed variable: no check
        handles.append((backing, handle))
    return handles


def _has_updates(handles: list) -> bool:
    """Whether some op writes one of the variables: in the variable's own graph, or in the
    default graph (a tf.function) through its capture of the variable."""
    graph = tf.compat.v1.get_default_graph()
    captured = {id(outer): inner for outer, inner in getattr(graph, "captures", ())}
    for variable, handle in handles:
        uses = [handle] if _graph_of(handle) is not None else []
        if id(handle) in captured:
            uses.append(captured[id(handle)])
        initializer = getattr(variable.initializer, "name", None)
        for use in uses:
            for op in use.consumers():
                if op.name != initializer and op.type in _WRITE_OPS | _CALL_OPS:
                    return True
    return False


def _check_keras_metric(key: str, metric: keras.metrics.Metric) -> None:
    """tf.estimator 2.15's checks of a Keras metric in eval_metric_ops (graph mode only):
    update_state(...) was called on it, and its variables are of the default graph."""
    if tf.executing_eagerly():
        return
    handles = _metric_handles(metric)
    if not handles:
        return
    if not _has_updates(handles):
        raise ValueError(
            f'Please call update_state(...) on the "{metric.name}" metric. Expected a Keras '
            "metric in eval_metric_ops to be updated in the model_fn call that returns it. "
            f"Fix: call {key!r}'s metric.update_state(labels, predictions) in the model_fn "
            f"before returning the EstimatorSpec. Received: eval_metric_ops[{key!r}]="
            f"{type(metric).__name__}(name={metric.name!r}) without updates"
        )
    for variable, handle in handles:
        graph = _graph_of(handle)
        if graph is not None and not _in_default_graph_scope(graph):
            label = f"{key}: {variable.name}"
            raise ValueError(
                _DEFAULT_GRAPH_ERROR.format("eval_metric_ops", label)
                + " Expected the Keras metric to be created and updated inside the model_fn "
                "call that returns it. Fix: create the metric in the model_fn, not in another "
                f"graph or an earlier call. Received: eval_metric_ops={label!r}"
            )


def _is_metric_part(x: Any) -> bool:
    return _is_tensor(x) or isinstance(x, (tf.Operation, tf.Variable))


def _validate_eval_metric_ops(eval_metric_ops: Any) -> dict[str, Any]:
    """As tf.estimator 2.15: name -> `(value, update_op)` (value may be a nested tuple / dict
    of tensors) or a Keras metric updated in the model_fn."""
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
            _check_keras_metric(key, value)
            continue
        if not isinstance(value, tuple) or len(value) != 2:
            raise TypeError(
                "Values of eval_metric_ops must be (metric_value, update_op) tuples, "
                f"given: {value} for key: {key}. Fix: use a tf.compat.v1.metrics function "
                "(it returns that pair) or a keras.metrics.Metric updated in the model_fn. "
                f"Received: eval_metric_ops[{key!r}]={value!r}"
            )
        for part in tf.nest.flatten(value):
            if not _is_metric_part(part):
                raise TypeError(
                    f"Values of eval_metric_ops must be (metric_value, update_op) tuples of "
                    f"Tensors or Operations, given: {value} for key: {key}. Expected "
                    "metric_value to be a Tensor or a nested tuple / dict of Tensors, and "
                    "update_op a Tensor or Operation. Fix: use a tf.compat.v1.metrics "
                    "function, which returns that pair, or a keras.metrics.Metric. "
                    f"Received: type(part)={type(part).__name__} in eval_metric_ops[{key!r}]"
                )
            _check_graph(part, "eval_metric_ops", f"{key}: {getattr(part, 'name', '')}")
    return dict(eval_metric_ops)


def _validate_scaffold(scaffold: Any) -> tf.compat.v1.train.Scaffold:
    scaffold = scaffold or tf.compat.v1.train.Scaffold()
    if not isinstance(scaffold, tf.compat.v1.train.Scaffold):
        raise TypeError(
            f"scaffold must be tf.train.Scaffold. Given: {scaffold}. Fix: pass "
            "scaffold=tf.compat.v1.train.Scaffold(...) or leave it out. "
            f"Received: type(scaffold)={type(scaffold).__name__}"
        )
    return scaffold


def _validate_export_outputs(
    export_outputs: Any, predictions: Any, mode: str | None
) -> dict[str, ExportOutput] | None:
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


class _EstimatorSpecFields(NamedTuple):
    """EstimatorSpec's fields, in tf.estimator's order (no defaults: `EstimatorSpec.__new__`
    has them, and validates)."""

    mode: str | None
    # A Tensor or a dict of them; {} when the model_fn gave none.
    predictions: tf.Tensor | dict[str, tf.Tensor]
    loss: tf.Tensor | None
    # An Operation or Tensor, a variable, or a Keras optimizer (see EstimatorSpec).
    train_op: tf.Operation | tf.Tensor | tf.Variable | keras.optimizers.Optimizer | None
    # name -> (value, update_op) or a keras.metrics.Metric
    eval_metric_ops: dict[str, Any]
    export_outputs: dict[str, ExportOutput] | None
    training_chief_hooks: tuple[tf.compat.v1.train.SessionRunHook, ...]
    training_hooks: tuple[tf.compat.v1.train.SessionRunHook, ...]
    scaffold: tf.compat.v1.train.Scaffold
    evaluation_hooks: tuple[tf.compat.v1.train.SessionRunHook, ...]
    prediction_hooks: tuple[tf.compat.v1.train.SessionRunHook, ...]


class EstimatorSpec(_EstimatorSpecFields):
    """Ops and objects returned from a `model_fn` and passed to an `Estimator`.

    Validation follows tf.estimator 2.15: TRAIN needs `loss` and `train_op`, EVAL needs
    `loss`, PREDICT needs `predictions`; `loss` must be a scalar tensor; hooks must be
    `SessionRunHook`s; `eval_metric_ops` maps names to `(value, update_op)` pairs (the
    value may be a nested tuple / dict of tensors: evaluate() then reports that structure)
    or to `keras.metrics.Metric` objects updated inside the model_fn. `mode=None` is
    accepted, as in tf.estimator: nothing is then required, and the Estimator runs the mode
    it called the model_fn for (`spec_for_mode` checks the spec against that mode).

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
        mode: str | None,
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
        if mode is not None and mode not in (ModeKeys.TRAIN, ModeKeys.EVAL, ModeKeys.PREDICT):
            raise ValueError(
                "mode must be one of ModeKeys.TRAIN, EVAL or PREDICT, but it is not. Fix: pass "
                "the mode the model_fn received (or None, as tf.estimator accepted: the "
                f"Estimator then runs the mode it called the model_fn for). Received: mode={mode!r}"
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


def spec_for_mode(spec: EstimatorSpec, mode: str) -> EstimatorSpec:
    """`spec` as the Estimator runs it in `mode`. A spec built with `mode=None` (accepted
    by tf.estimator 2.15, which then ran the mode it had called the model_fn for) is
    checked for what `mode` needs and given that mode; any other spec is returned as is.

    Example:
        >>> spec = EstimatorSpec(None, loss=loss, train_op=train_op)
        >>> spec_for_mode(spec, ModeKeys.TRAIN).mode
        'train'
    """
    if spec.mode is not None:
        return spec
    fields = dict(zip(spec._fields[1:], spec[1:]))
    if isinstance(spec.predictions, dict) and not spec.predictions:
        fields["predictions"] = None  # "no predictions" (EstimatorSpec keeps {} for None)
    return EstimatorSpec(mode, **fields)
