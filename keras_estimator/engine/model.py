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
from keras_estimator.engine.output_keys import GLOBAL_STEP_KEY, HOOKS_KEY, LOSS_KEY
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


def _output_specs(outputs: Any) -> Any:
    return tf.nest.map_structure(lambda t: tf.TensorSpec(t.shape, t.dtype), outputs)


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


class _DistributedLoop:
    """The loop under a strategy: several steps per call, each on `next(iterator)`.

    (A strategy's step inside the chunked loop's `tf.cond` does not run: its replica
    threads capture tensors across the branch; a plain while loop over `next()` does.)
    When the input ends inside a call, the iterator's OutOfRangeError ends it: the steps
    before it have run, their number is read from the global step, and the outputs are
    the last ones known with that global step. Same interface as the chunked loop.
    """

    def __init__(self, step_fn: Callable, global_step: tf.Variable, one_per_call: bool) -> None:
        self._global_step = global_step
        self._one_per_call = one_per_call  # multi-worker: several per call hung collectives
        self._one_concrete: Any = None
        self._specs: Any = None
        self._last: Any = None
        self._one = tf.function(lambda iterator: step_fn(next(iterator)), autograph=False)
        self._many = tf.function(self._run_many, autograph=False)

    def _run_many(self, iterator: Any, num_steps: tf.Tensor) -> Any:
        def body(i: tf.Tensor, outputs: Any) -> tuple[tf.Tensor, Any]:
            # The one-step trace, called: the model_fn (and its hooks) is traced only once.
            return i + 1, self._one_concrete(iterator)

        init = tf.nest.map_structure(_zeros, self._specs)
        invariants = tf.nest.map_structure(lambda s: tf.TensorShape(None), self._specs)
        _, outputs = tf.while_loop(
            lambda i, outputs: i < num_steps,
            body,
            (tf.constant(0, tf.int64), init),
            shape_invariants=(tf.TensorShape([]), invariants),
        )
        return outputs

    def get_concrete_function(self, iterator_spec: Any, steps_spec: Any) -> Any:
        concrete = self._one_concrete = self._one.get_concrete_function(iterator_spec)
        self._specs = _output_specs(concrete.structured_outputs)
        self._many.get_concrete_function(iterator_spec, steps_spec)
        return concrete

    def __call__(self, iterator: Any, num_steps: tf.Tensor) -> tuple[tf.Tensor, Any]:
        steps = int(num_steps)  # >= 1: the training loop never asks for none
        before = int(self._global_step.numpy())
        try:
            if steps > 1 and not self._one_per_call:
                outputs = self._many(iterator, tf.constant(steps, tf.int64))
            else:
                for _ in range(steps):
                    outputs = self._one(iterator)
        except (tf.errors.OutOfRangeError, StopIteration):
            ran = int(self._global_step.numpy()) - before
            last = self._last or tf.nest.map_structure(_zeros, self._specs)
            return tf.constant(ran, tf.int64), dict(
                last, **{GLOBAL_STEP_KEY: self._global_step.read_value()}
            )
        self._last = outputs
        return tf.constant(steps, tf.int64), outputs


def _zeros(spec: tf.TensorSpec) -> tf.Tensor:
    return tf.zeros([0 if d is None else d for d in spec.shape.as_list()], spec.dtype)


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
        self._predict_hook_outputs: dict = {}
        # Set by the Estimator before a trace; its hooks' fetches join the outputs.
        self.hook_runner: Any = None
        # RunConfig.save_summary_steps: summaries written inside the TRAIN step, every N
        # steps counted from the global step at which the current train() call started.
        self.summary_steps: int | None = None
        self.is_chief = True  # training_chief_hooks run on the chief only
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
            hook_outputs = self._attach_hooks(spec.training_hooks + chief_hooks, graph)
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
            outputs = {LOSS_KEY: tf.identity(spec.loss), GLOBAL_STEP_KEY: global_step.read_value()}
        if hook_outputs:
            outputs[HOOKS_KEY] = hook_outputs
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
                "that the loss is computed from."
            )
        with tf.name_scope("keras_optimizer"):
            return apply_as_train_op(optimizer, pairs)

    def _attach_hooks(self, spec_hooks: tuple, graph: tf.Graph) -> dict:
        if self.hook_runner is None:
            return {}
        if self.hook_runner.attached_to(graph):
            # Hooks see the first replica (tf.estimator's replica 0; this worker's own
            # under multi-worker); the other replicas return look-alikes.
            return self.hook_runner.outputs_like_first()
        return self.hook_runner.attach(spec_hooks, graph, global_step_read(graph))

    def test_step(self, data: Any) -> dict[str, tf.Tensor]:
        with tf1_graph_scope(self._store, self._ke_global_step) as graph:
            spec = self._spec_for(data, ModeKeys.EVAL)
            for reserved, quoted in ((LOSS_KEY, '"loss"'), (GLOBAL_STEP_KEY, "`global_step`")):
                if reserved in spec.eval_metric_ops:
                    raise ValueError(
                        f"Metric with name {quoted} is not allowed, because Estimator "
                        "already defines a default metric with the same name."
                    )
            ops = dict(spec.eval_metric_ops)
            ops[LOSS_KEY] = tf.compat.v1.metrics.mean(spec.loss, name="keras_estimator_eval_loss")
            values, updates = metrics_lib.metric_values(ops, self._store)
            self._eval_updates = updates
            hook_outputs = self._attach_hooks(spec.evaluation_hooks, graph)
            if hook_outputs:
                values[HOOKS_KEY] = hook_outputs
            return values

    def predict_step(self, data: Any) -> Any:
        with tf1_graph_scope(self._store, self._ke_global_step) as graph:
            spec = self._spec_for(data, ModeKeys.PREDICT)
            self._predict_hook_outputs = self._attach_hooks(spec.prediction_hooks, graph)
            return spec.predictions

    # -- compiled steps and loops ----------------------------------------------------
    def make_step(
        self, mode: str, element_spec: Any, strategy: tf.distribute.Strategy | None = None
    ) -> tuple[Callable, Any]:
        """Traces the step for `mode` once; returns `(step_fn, output_specs)`.

        Under a `strategy` (only TRAIN runs under one) each replica runs the step on its own
        batch; the loss is the mean over replicas and hooks see replica 0's values, as
        tf.estimator showed them.

        TRAIN runs the traced step as is: every stateful op the model_fn created runs, as
        Keras layers (batch-norm statistics, metrics) expect. EVAL and PREDICT keep only
        what their results depend on, like `session.run(fetches)` under tf.estimator: a
        train_op or an optimizer built unconditionally in the model_fn does not run.
        """
        if mode == ModeKeys.TRAIN and strategy is not None:
            return self._distributed_train_step(strategy), None
        if mode == ModeKeys.TRAIN:
            step_fn = tf.function(self.train_step, autograph=False)
            concrete = step_fn.get_concrete_function(element_spec)
            return step_fn, _output_specs(concrete.structured_outputs)
        step = self.test_step if mode == ModeKeys.EVAL else self.predict_step
        raw: dict[str, Any] = {}

        def traced(data: Any) -> Any:
            self._eval_updates, self._predict_hook_outputs = [], {}
            outputs = step(data)
            if mode == ModeKeys.PREDICT:
                # PREDICT yields (predictions, hook fetches); EVAL nests them in its dict.
                outputs = (outputs, self._predict_hook_outputs)
            raw["outputs"] = outputs
            raw["ops"] = list(self._eval_updates)
            return outputs

        concrete = tf.function(traced, autograph=False).get_concrete_function(element_spec)
        feeds = concrete.inputs[: len(concrete.inputs) - len(concrete.captured_inputs)]
        wrapped = internals.graph_pruner(concrete.graph)
        pruned = wrapped.prune(feeds=feeds, fetches=(raw["outputs"], raw["ops"]))

        def run(data: Any) -> Any:
            return pruned(*tf.nest.flatten(data, expand_composites=True))[0]

        return run, _output_specs(raw["outputs"])

    def make_loop(
        self, step_fn: Callable, out_specs: Any, strategy: tf.distribute.Strategy | None = None
    ) -> Any:
        if isinstance(strategy, tf.distribute.experimental.ParameterServerStrategy):
            return CoordinatedLoop(step_fn, self._ke_global_step, strategy)
        if strategy is not None:  # make_step gave the distributed step, no specs
            in_multi_worker = internals.in_multi_worker_mode(strategy)
            return _DistributedLoop(step_fn, self._ke_global_step, in_multi_worker)
        return self._make_chunked_loop(step_fn, out_specs)

    def _make_chunked_loop(self, step_fn: Callable, out_specs: Any) -> Callable:
        """A tf.function running `step_fn` up to `num_steps` times over an iterator.

        Returns `(steps_run, last_outputs)`; stops early when the iterator is exhausted.
        """

        def zeros(spec: tf.TensorSpec) -> tf.Tensor:
            shape = [0 if d is None else d for d in spec.shape.as_list()]
            return tf.zeros(shape, spec.dtype)

        def loop(iterator: Any, num_steps: tf.Tensor) -> tuple[tf.Tensor, Any]:
            specs = out_specs

            def cond(i, exhausted, outputs):
                return tf.logical_and(i < num_steps, tf.logical_not(exhausted))

            def body(i, exhausted, outputs):
                nxt = iterator.get_next_as_optional()
                has = nxt.has_value()
                new_outputs = tf.cond(has, lambda: step_fn(nxt.get_value()), lambda: outputs)
                return i + tf.cast(has, tf.int64), tf.logical_not(has), new_outputs

            init = tf.nest.map_structure(zeros, specs)
            invariants = tf.nest.map_structure(lambda s: tf.TensorShape(None), specs)
            i, _, outputs = tf.while_loop(
                cond,
                body,
                (tf.constant(0, tf.int64), tf.constant(False), init),
                shape_invariants=(tf.TensorShape([]), tf.TensorShape([]), invariants),
            )
            return i, outputs

        return tf.function(loop, autograph=False)

    def reset_metrics(self) -> None:
        super().reset_metrics()
        self._store.reset_locals()
