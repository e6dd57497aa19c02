"""EstimatorModel: a keras.Model whose train/test/predict steps call the user's model_fn."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import keras
import tensorflow as tf

from keras_estimator.distribute.strategies import first_replica
from keras_estimator.engine import metrics as metrics_lib
from keras_estimator.engine.coordinated_loop import CoordinatedLoop
from keras_estimator.engine.graph_scope import global_step_read, tf1_graph_scope
from keras_estimator.engine.keras_optimizer import apply_as_train_op
from keras_estimator.engine.loops import ChunkedLoop, DistributedLoop, PredictStep, TracedStep
from keras_estimator.engine.output_keys import GLOBAL_STEP_KEY, LOSS_KEY
from keras_estimator.engine.summaries import summaries_every
from keras_estimator.engine.variable_store import VariableStore
from keras_estimator.seam import internals
from keras_estimator.spec.estimator_spec import EstimatorSpec
from keras_estimator.spec.mode_keys import ModeKeys

ModelFnCaller = Callable[[Any, Any, str], EstimatorSpec]
_ASSIGN_OPS = frozenset({"AssignAddVariableOp", "AssignVariableOp", "AssignSubVariableOp"})
_CALL_OPS = frozenset(
    {"If", "StatelessIf", "While", "StatelessWhile", "PartitionedCall", "StatefulPartitionedCall"}
)


def _reported(loss: tf.Tensor) -> tf.Tensor:
    """The training loss as logged and returned: itself, or the mean of a loss of shape
    [1] or of statically unknown size (accepted by tf.estimator)."""
    return tf.identity(loss) if loss.shape.rank == 0 else tf.reduce_mean(loss)


def split_batch(data: Any) -> tuple[Any, Any]:
    """Our datasets yield `(features, labels)` or `(features,)` when there are no labels;
    Keras' own `predict` (on `keras_model`) hands over the features alone."""
    if isinstance(data, tuple) and len(data) == 1:
        return data[0], None
    if not isinstance(data, tuple | list):
        return data, None
    return data


def _global_step_writes(graph: tf.Graph, global_step: tf.Variable) -> bool | None:
    """True/False when the traced step certainly does / does not write the global step;
    None when a control-flow or function op takes it and only the run can tell."""
    handle = graph.capture(global_step.handle)
    consumer_types = {op.type for op in handle.consumers()}
    if consumer_types & _ASSIGN_OPS:
        return True
    if consumer_types & _CALL_OPS:
        return None
    return False


class EstimatorModel(keras.Model):
    """A Keras model whose steps are the user's model_fn, one trace per mode.

    Variables live in a `VariableStore` keyed by TF1 names; the global step is an int64
    variable shared with `tf.compat.v1.train.get_global_step()` inside the model_fn.
    """

    def __init__(
        self, call_model_fn: ModelFnCaller, store: VariableStore, global_step: tf.Variable
    ) -> None:
        super().__init__(name="estimator_model")
        self._call_model_fn = call_model_fn
        self._store = store
        self._ke_global_step = global_step
        self._eval_updates: list = []
        # Set by the runtime before a trace; the hooks begin in the traced graph.
        self.hook_runner: Any = None
        # RunConfig.save_summary_steps: summaries written inside the TRAIN step, every N
        # steps counted from the global step at which the current train() call started.
        self.summary_steps: int | None = None
        self.is_chief = True  # training_chief_hooks run on the chief only
        self.random_seed: int | None = None  # RunConfig.tf_random_seed, the graph-level seed
        with tf.init_scope():
            self.train_call_start = tf.Variable(0, dtype=tf.int64, trainable=False)

    @property
    def store(self) -> VariableStore:
        """The model_fn's variables by TF1 name (what checkpoints hold)."""
        return self._store

    @property
    def global_step(self) -> tf.Variable:
        return self._ke_global_step

    # -- steps -------------------------------------------------------------------
    def _spec_for(self, data: Any, mode: str) -> EstimatorSpec:
        # tf.estimator built each mode in a fresh graph seeded with RunConfig.tf_random_seed
        # (None: unseeded), whatever the process-wide seed is.
        tf.compat.v1.get_default_graph().seed = self.random_seed
        features, labels = split_batch(data)
        if mode == ModeKeys.PREDICT:
            labels = None  # tf.estimator never showed labels to a PREDICT model_fn
        return self._call_model_fn(features, labels, mode)

    def train_step(self, data: Any) -> dict[str, tf.Tensor]:
        global_step = self._ke_global_step
        with tf1_graph_scope(self._store, global_step) as graph:
            call_start = self.train_call_start.read_value()
            with summaries_every(self.summary_steps, global_step_read(graph), call_start):
                spec = self._spec_for(data, ModeKeys.TRAIN)
                tf.compat.v1.summary.scalar(LOSS_KEY, spec.loss)  # as tf.estimator added it
            train_op = spec.train_op
            if isinstance(train_op, keras.optimizers.Optimizer):
                train_op = self._apply_keras_optimizer(train_op, spec.loss, graph)
            chief_hooks = spec.training_chief_hooks if self.is_chief else ()
            self._attach_hooks(spec.training_hooks + chief_hooks, graph)
        start = global_step_read(graph)
        writes = _global_step_writes(graph, global_step)
        with tf.control_dependencies([train_op]):
            if writes is False:
                bumped = global_step.assign_add(1, read_value=False)
            elif writes is None:
                # The train_op may or may not increment it (e.g. inside tf.cond): check.

                def bump() -> tf.Tensor:
                    with tf.control_dependencies([global_step.assign_add(1, read_value=False)]):
                        return tf.constant(True)

                bumped = tf.cond(
                    tf.equal(global_step.read_value(), start), bump, lambda: tf.constant(False)
                )
            else:
                bumped = tf.no_op()
        with tf.control_dependencies([train_op, bumped]):
            outputs = {LOSS_KEY: _reported(spec.loss), GLOBAL_STEP_KEY: global_step.read_value()}
        return outputs

    def _distributed_train_step(self, strategy: tf.distribute.Strategy) -> Callable:
        # tf.estimator's contract with v1 optimizers: under this flag they scale the loss by
        # 1/replicas (gradients averaged), unless the last tf.losses reduction was SUM.

        def step(data: Any) -> dict[str, Any]:
            with internals.estimator_loss_scaling(strategy):
                outputs = strategy.run(self.train_step, args=(data,))
            scaled = internals.loss_scaled_by_optimizer(tf.compat.v1.get_default_graph())
            # The reported loss: the mean over replicas when the optimizer averaged, else
            # the sum (tf.estimator's rule).
            reduce_op = tf.distribute.ReduceOp.MEAN if scaled else tf.distribute.ReduceOp.SUM
            first = first_replica(outputs, strategy)
            first[LOSS_KEY] = strategy.reduce(reduce_op, outputs[LOSS_KEY], axis=None)
            return first

        return step

    def _apply_keras_optimizer(
        self, optimizer: keras.optimizers.Optimizer, loss: tf.Tensor, graph: tf.Graph
    ) -> tf.Operation:
        variables = graph.get_collection(tf.compat.v1.GraphKeys.TRAINABLE_VARIABLES)
        grads = tf.gradients(loss, variables)
        pairs = [(g, v) for g, v in zip(grads, variables) if g is not None]
        if not pairs:
            raise ValueError(
                "The Keras optimizer returned as train_op found no trainable variable that the "
                "loss depends on. Expected the model_fn to create trainable variables (layers) "
                "that the loss is computed from. Fix: compute the loss from the model's "
                "layers, or return an optimizer.minimize(...) op as train_op. "
                f"Received: {len(variables)} trainable variables, none reaching loss={loss.name!r}"
            )
        with tf.name_scope("keras_optimizer"):
            return apply_as_train_op(optimizer, pairs)

    def _attach_hooks(self, spec_hooks: tuple, graph: tf.Graph) -> None:
        """Begins the hooks in the traced graph (once per trace: the first replica's). What
        they fetch is pruned from this trace when they ask for it (engine/loops.py)."""
        if self.hook_runner is not None and not self.hook_runner.attached_to(graph):
            self.hook_runner.attach(spec_hooks, graph, global_step_read(graph))

    def test_step(self, data: Any) -> dict[str, tf.Tensor]:
        with tf1_graph_scope(self._store, self._ke_global_step) as graph:
            spec = self._spec_for(data, ModeKeys.EVAL)
            for reserved, quoted in ((LOSS_KEY, '"loss"'), (GLOBAL_STEP_KEY, "`global_step`")):
                if reserved in spec.eval_metric_ops:
                    raise ValueError(
                        f"Metric with name {quoted} is not allowed, because Estimator "
                        "already defines a default metric with the same name. Fix: rename "
                        "that eval_metric_ops key. "
                        f"Received: eval_metric_ops keys={sorted(spec.eval_metric_ops)}"
                    )
            ops = dict(spec.eval_metric_ops)
            ops[LOSS_KEY] = tf.compat.v1.metrics.mean(spec.loss, name="keras_estimator_eval_loss")
            values, updates = metrics_lib.metric_values(ops, self._store)
            self._eval_updates = updates
            self._attach_hooks(spec.evaluation_hooks, graph)
            return values

    def predict_step(self, data: Any) -> Any:
        with tf1_graph_scope(self._store, self._ke_global_step) as graph:
            spec = self._spec_for(data, ModeKeys.PREDICT)
            self._attach_hooks(spec.prediction_hooks, graph)
            return spec.predictions

    # -- compiled steps and loops ----------------------------------------------------
    def make_step(
        self, mode: str, element_spec: Any, strategy: tf.distribute.Strategy | None = None
    ) -> tuple[Callable, TracedStep | None]:
        """Traces the step for `mode` once; returns `(step_fn, traced step)`.

        Under a `strategy` (only TRAIN runs under one) each replica runs the step on its own
        batch; the loss is the mean over replicas and hooks see replica 0's values, as
        tf.estimator showed them. The loop traces that step (no traced step here).

        TRAIN runs the traced step as is: every stateful op the model_fn created runs, as
        Keras layers (batch-norm statistics, metrics) expect. EVAL and PREDICT keep only
        what their results depend on, like `session.run(fetches)` under tf.estimator: a
        train_op or an optimizer built unconditionally in the model_fn does not run.
        """
        if mode == ModeKeys.TRAIN and strategy is not None:
            return self._distributed_train_step(strategy), None
        if mode == ModeKeys.TRAIN:
            step_fn = tf.function(self.train_step, autograph=False)
            traced = TracedStep.of(step_fn.get_concrete_function(element_spec), fn=step_fn)
            return step_fn, traced
        step = self.test_step if mode == ModeKeys.EVAL else self.predict_step
        raw: dict[str, Any] = {}

        def trace(data: Any) -> Any:
            self._eval_updates = []
            raw["outputs"] = step(data)
            raw["ops"] = list(self._eval_updates)
            return raw["outputs"]

        concrete = tf.function(trace, autograph=False).get_concrete_function(element_spec)
        num_args = len(concrete.inputs) - len(concrete.captured_inputs)
        traced = TracedStep(None, concrete.graph, raw["outputs"], raw["ops"], num_args)
        run = traced.with_fetches({})
        return (lambda data: run(data)[0]), traced

    def make_loop(
        self,
        step_fn: Callable,
        traced: TracedStep | None,
        mode: str,
        strategy: tf.distribute.Strategy | None = None,
    ) -> Any:
        """The compiled loop of `mode` around the step (see engine/loops.py)."""
        if mode == ModeKeys.PREDICT:
            return PredictStep(traced)
        if isinstance(strategy, tf.distribute.experimental.ParameterServerStrategy):
            return CoordinatedLoop(step_fn, self._ke_global_step, strategy)
        if strategy is not None:  # make_step gave the distributed step, no trace yet
            # Multi-worker too: the training loop has every task run as many steps per call.
            return DistributedLoop(step_fn, self._ke_global_step, one_per_call=False)
        return ChunkedLoop(step_fn, traced.specs, traced)

    def reset_metrics(self) -> None:
        super().reset_metrics()
        self._store.reset_locals()
