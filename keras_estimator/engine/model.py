"""EstimatorModel: a keras.Model whose train/test/predict steps call the user's model_fn."""

from __future__ import annotations

import dataclasses
import functools
import logging
import os
from collections.abc import Callable
from typing import Any

import keras
import numpy as np
import tensorflow as tf

from keras_estimator.distribute.strategies import first_replica
from keras_estimator.engine import metrics as metrics_lib
from keras_estimator.engine.coordinated_loop import CoordinatedLoop
from keras_estimator.engine.fit_logs import fit_callbacks, global_step_as_int
from keras_estimator.engine.graph_scope import global_step_read, tf1_graph_scope
from keras_estimator.engine.keras_optimizer import GlobalStepOptimizer
from keras_estimator.engine.loops import (
    EVAL_STEPS_BEFORE_TRACING,
    TRAIN_STEPS_BEFORE_TRACING,
    ChunkedLoop,
    DistributedEvalLoop,
    DistributedLoop,
    Loop,
    PredictStep,
    TracedStep,
    has_kernel_state,
)
from keras_estimator.engine.output_keys import GLOBAL_STEP_KEY, LOSS_KEY
from keras_estimator.engine.random_streams import RandomStreams
from keras_estimator.engine.step_passes import (
    StepHooks,
    TrainStepParts,
    attach_hooks,
    run_passes,
)
from keras_estimator.engine.summaries import summaries_every
from keras_estimator.engine.variable_store import VariableStore
from keras_estimator.seam import internals
from keras_estimator.spec.estimator_spec import EstimatorSpec
from keras_estimator.spec.mode_keys import ModeKeys

logger = logging.getLogger("keras_estimator")

ModelFnCaller = Callable[[Any, Any, str], EstimatorSpec]


def _reported(loss: tf.Tensor) -> tf.Tensor:
    """The training loss as logged and returned: itself, or the mean of a loss of shape
    [1] or of statically unknown size (accepted by tf.estimator)."""
    return tf.identity(loss) if loss.shape.rank == 0 else tf.reduce_mean(loss)


@dataclasses.dataclass(frozen=True)
class Step:
    """What `make_step` gives the loop: the step function, its trace (None: a distributed
    step, which its loop traces), and for distributed EVAL the metric update ops its
    trace makes (filled when the loop traces it; the loop runs them after the steps)."""

    fn: Callable
    traced: TracedStep | None
    eval_updates: list = dataclasses.field(default_factory=list)


def split_batch(data: Any) -> tuple[Any, Any]:
    """Our datasets yield `(features, labels)` or `(features,)` when there are no labels;
    Keras' own `predict` (on `keras_model`) hands over the features alone."""
    if isinstance(data, tuple) and len(data) == 1:
        return data[0], None
    if not isinstance(data, tuple | list):
        return data, None
    features, labels = data
    return features, labels


@dataclasses.dataclass(frozen=True)
class TraceSettings:
    """What the model's traces take from RunConfig, fixed for the model's life.

    Attributes:
        summary_steps: save_summary_steps: summaries written inside the TRAIN step every N
            steps, counted from the global step at which the current train() call started.
        is_chief: training_chief_hooks run on the chief only.
        random_seed: tf_random_seed, the graph-level seed of every trace.
        skipped_passes: training-step passes left out (engine/step_passes.py), to bisect.
    """

    summary_steps: int | None = None
    is_chief: bool = True
    random_seed: int | None = None
    skipped_passes: frozenset[str] = frozenset()


class EstimatorModel(keras.Model):
    """A Keras model whose steps are the user's model_fn, one trace per mode.

    Variables live in a `VariableStore` keyed by TF1 names; the global step is an int64
    variable shared with `tf.compat.v1.train.get_global_step()` inside the model_fn.
    """

    def __init__(
        self,
        call_model_fn: ModelFnCaller,
        store: VariableStore,
        global_step: tf.Variable,
        settings: TraceSettings = TraceSettings(),
    ) -> None:
        super().__init__(name="estimator_model")
        self._call_model_fn = call_model_fn
        self._store = store
        self._ke_global_step = global_step
        self._settings = settings
        self.built = True  # its variables are the model_fn's (or come on its first data)
        with tf.init_scope():
            self.train_call_start = tf.Variable(0, dtype=tf.int64, trainable=False)
        # The training step's seeded TF1 random ops, restartable without new kernels.
        self.random_streams = RandomStreams()
        # The Keras road (runtime/keras_road.py): saves Keras-side training to model_dir,
        # builds the model from model_dir's checkpoint on first use, exports it.
        self.road: Any = None
        self.features_spec: Any = None  # the features' TypeSpecs of the last trace
        # What compile() sets on a Keras model, until compile() (GlobalStepOptimizer) runs.
        self.optimizer = None

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
        tf.compat.v1.get_default_graph().seed = self._settings.random_seed
        features, labels = split_batch(data)
        if mode == ModeKeys.PREDICT:
            labels = None  # tf.estimator never showed labels to a PREDICT model_fn
        if mode == ModeKeys.TRAIN:
            return self._call_model_fn(features, labels, mode)  # train_step writes them
        with summaries_every(None, None, None):  # EVAL/PREDICT write no summaries (as 2.15)
            return self._call_model_fn(features, labels, mode)

    def train_step(self, data: Any) -> dict[str, tf.Tensor]:
        """Keras' training step (keras_model.fit): the TRAIN model_fn, no call's hooks."""
        return self._train_step(data, None)

    def _train_step(self, data: Any, hooks: StepHooks | None) -> dict[str, tf.Tensor]:
        """The TRAIN model_fn in the TF1 graph scope (its summaries written every
        save_summary_steps), then the training step's passes (engine/step_passes.py)."""
        global_step = self._ke_global_step
        # The Estimator's own trace, outside a strategy (not keras_model.fit's, nor a
        # replica's, whose kernels keep their streams), gets restartable random streams.
        own_trace = hooks is not None and not tf.distribute.has_strategy()
        skipped = self._settings.skipped_passes
        with tf1_graph_scope(self._store, global_step) as graph:
            call_start = self.train_call_start.read_value()
            summary_steps = self._settings.summary_steps
            with summaries_every(summary_steps, global_step_read(graph), call_start) as needs:
                spec = self._spec_for(data, ModeKeys.TRAIN)
                tf.compat.v1.summary.scalar(LOSS_KEY, spec.loss)  # as tf.estimator added it
                needs.append(spec.loss)
                chief_hooks = spec.training_chief_hooks if self._settings.is_chief else ()
                parts = TrainStepParts(
                    graph, spec, spec.train_op, global_step, hooks,
                    spec.training_hooks + chief_hooks,
                    self.random_streams if own_trace else None,
                )  # fmt: skip
                parts = run_passes(parts, in_model_fn_scope=True, skipped=skipped)
        parts = run_passes(parts, in_model_fn_scope=False, skipped=skipped)
        with tf.control_dependencies([parts.train_op]):
            return {LOSS_KEY: _reported(spec.loss), GLOBAL_STEP_KEY: global_step.read_value()}

    def _distributed_train_step(
        self, strategy: tf.distribute.Strategy, hooks: StepHooks | None
    ) -> Callable:
        # tf.estimator's contract with v1 optimizers: under this flag they scale the loss by
        # 1/replicas (gradients averaged), unless the last tf.losses reduction was SUM.
        train_step = functools.partial(self._train_step, hooks=hooks)

        def step(data: Any) -> dict[str, Any]:
            with internals.estimator_loss_scaling(strategy):
                outputs = strategy.run(train_step, args=(data,))
            scaled = internals.loss_scaled_by_optimizer(tf.compat.v1.get_default_graph())
            # The reported loss: the mean over replicas when the optimizer averaged, else
            # the sum (tf.estimator's rule).
            reduce_op = tf.distribute.ReduceOp.MEAN if scaled else tf.distribute.ReduceOp.SUM
            first = first_replica(outputs, strategy)
            first[LOSS_KEY] = strategy.reduce(reduce_op, outputs[LOSS_KEY], axis=None)
            return first

        return step

    def test_step(self, data: Any) -> dict[str, tf.Tensor]:
        """Keras' evaluation step (keras_model.evaluate): the EVAL model_fn's metrics."""
        pending, updates = self._eval_updates_of(data, None)
        return metrics_lib.values_after(pending, updates)

    def _eval_updates_of(
        self, data: Any, hooks: StepHooks | None, distributed: bool = False
    ) -> tuple[dict, list]:
        """The EVAL model_fn on `data`: `(pending metric values, update ops)`.

        `distributed`: one replica's share; a replica left without examples (the input's
        last step) adds nothing to the loss mean instead of a NaN.
        """
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
            loss, weights = spec.loss, None
            if distributed:
                examples = tf.shape(tf.nest.flatten(split_batch(data)[0])[0])[0]
                has = examples > 0
                loss = tf.where(has, loss, tf.zeros_like(loss))
                weights = tf.cast(has, loss.dtype)
            ops[LOSS_KEY] = tf.compat.v1.metrics.mean(
                loss, weights=weights, name="keras_estimator_eval_loss"
            )
            pending, updates = metrics_lib.metric_updates(ops, self._store)
            attach_hooks(hooks, spec.evaluation_hooks, graph)
            return pending, updates

    def _distributed_eval_step(
        self, strategy: tf.distribute.Strategy, hooks: StepHooks | None
    ) -> Step:
        """EVAL under eval_distribute (tf.estimator 2.15): every replica runs the model_fn
        on its own batch and updates its share of the metrics' (SUM-aggregated) local
        variables; the values are read across replicas after all updates."""
        traced_updates: list = []

        def step(data: Any) -> dict[str, Any]:
            parts: list = []

            def replica(data: Any) -> tf.Tensor:
                pending, updates = self._eval_updates_of(data, hooks, distributed=True)
                parts.append((pending, updates))
                return tf.constant(0)

            strategy.run(replica, args=(data,))
            updates = list({id(op): op for _, ops in parts for op in ops}.values())
            traced_updates[:] = updates  # this trace's: the loop runs them
            return metrics_lib.values_after(parts[0][0], updates)

        return Step(step, None, traced_updates)

    def predict_step(self, data: Any) -> Any:
        """Keras' prediction step (keras_model.predict): the PREDICT model_fn's outputs."""
        return self._predict_step(data, None)

    def _predict_step(self, data: Any, hooks: StepHooks | None) -> Any:
        with tf1_graph_scope(self._store, self._ke_global_step) as graph:
            spec = self._spec_for(data, ModeKeys.PREDICT)
            attach_hooks(hooks, spec.prediction_hooks, graph)
            return spec.predictions

    # -- compiled steps and loops ----------------------------------------------------
    def make_step(
        self,
        mode: str,
        element_spec: Any,
        strategy: tf.distribute.Strategy | None = None,
        hooks: StepHooks | None = None,
    ) -> Step:
        """Traces the step for `mode` once, `hooks` (a call's) begun in it after the
        model_fn; returns the step function and its trace.

        Under a `strategy` (TRAIN, and EVAL with eval_distribute) each replica runs the
        step on its own batch; the training loss is the mean over replicas and hooks see
        replica 0's values, as tf.estimator showed them; EVAL's metrics are summed across
        replicas. The loop traces that step (no traced step here).

        TRAIN runs the traced step as is: every stateful op the model_fn created runs, as
        Keras layers (batch-norm statistics, metrics) expect. EVAL and PREDICT keep only
        what their results depend on, like `session.run(fetches)` under tf.estimator: a
        train_op or an optimizer built unconditionally in the model_fn does not run.
        """
        self.features_spec = split_batch(element_spec)[0]
        if mode == ModeKeys.TRAIN and strategy is not None:
            return Step(self._distributed_train_step(strategy, hooks), None)
        if mode == ModeKeys.EVAL and strategy is not None:
            return self._distributed_eval_step(strategy, hooks)
        if mode == ModeKeys.TRAIN:
            step_fn = tf.function(functools.partial(self._train_step, hooks=hooks),
                                  autograph=False)  # fmt: skip
            return Step(step_fn, TracedStep.of(step_fn.get_concrete_function(element_spec),
                                               fn=step_fn))  # fmt: skip
        raw: dict[str, Any] = {}

        def trace(data: Any) -> Any:
            if mode == ModeKeys.EVAL:
                pending, raw["ops"] = self._eval_updates_of(data, hooks)
                raw["outputs"] = metrics_lib.values_after(pending, raw["ops"])
            else:
                raw["outputs"], raw["ops"] = self._predict_step(data, hooks), []
            return raw["outputs"]

        concrete = tf.function(trace, autograph=False).get_concrete_function(element_spec)
        num_args = len(concrete.inputs) - len(concrete.captured_inputs)
        # PREDICT runs its trace as is when it only reads (see loops.reads_only); EVAL's
        # metric updates are kept apart from a train_op by pruning.
        fn = concrete if mode == ModeKeys.PREDICT else None
        traced = TracedStep(fn, concrete.graph, raw["outputs"], raw["ops"], num_args)
        run = traced.with_fetches({})
        return Step(lambda data: run(data)[0], traced)

    def make_loop(
        self, step: Step, mode: str, strategy: tf.distribute.Strategy | None = None
    ) -> Loop | PredictStep:
        """The compiled loop of `mode` around the step (see engine/loops.py): the one
        place that turns a mode and a strategy into a loop; a watched call runs the same
        loop one step at a time, with hook fetches (`with_fetches`)."""
        step_fn, traced = step.fn, step.traced
        if mode == ModeKeys.PREDICT:
            assert traced is not None  # make_step traces every PREDICT step itself
            return PredictStep(traced)
        if isinstance(strategy, tf.distribute.experimental.ParameterServerStrategy):
            return CoordinatedLoop(step_fn, self._ke_global_step, strategy)
        if mode == ModeKeys.EVAL and strategy is not None:
            return DistributedEvalLoop(step_fn, updates=lambda: list(step.eval_updates))
        if strategy is not None:  # make_step gave the distributed step, no trace yet
            # Multi-worker too: the training loop has every task run as many steps per call.
            return DistributedLoop(step_fn, self._ke_global_step, one_per_call=False)
        # A step whose kernels keep state (random streams, say) always runs in the loop: one
        # instance of the step, as in TF1's graph. Others may run their first steps alone.
        assert traced is not None  # make_step traces every step outside a strategy itself
        keeps_state = has_kernel_state(traced.graph)
        if keeps_state:
            before_tracing = 0
        elif mode == ModeKeys.EVAL:
            before_tracing = EVAL_STEPS_BEFORE_TRACING
        else:
            before_tracing = TRAIN_STEPS_BEFORE_TRACING
        return ChunkedLoop(step_fn, traced.specs, traced, steps_before_tracing=before_tracing,
                           report_non_finite_loss=mode == ModeKeys.TRAIN,
                           keeps_kernel_state=keeps_state)  # fmt: skip

    # -- the Keras road: Keras' own API over the model_fn's variables -----------------------
    def _variables(self, trainable: bool) -> list[tf.Variable]:
        return [v for _, v in sorted(self._store.global_variables().items())
                if bool(v.trainable) == trainable]  # fmt: skip

    @property
    def trainable_weights(self) -> list[tf.Variable]:
        """The model_fn's trainable variables (TF1-named), sorted by name."""
        return self._variables(True)

    @property
    def non_trainable_weights(self) -> list[tf.Variable]:
        """The model_fn's other global variables (optimizer slots, the global step, ...)."""
        return self._variables(False)

    @property
    def weights(self) -> list[tf.Variable]:
        return self.trainable_weights + self.non_trainable_weights

    def _named_weights(self) -> list[tuple[str, tf.Variable]]:
        return sorted(self._store.global_variables().items())

    def save_own_variables(self, store: Any) -> None:
        """`save_weights` / ModelCheckpoint / BackupAndRestore: every global variable of
        the model_fn (the global step included), in TF1-name order."""
        for index, (_, variable) in enumerate(self._named_weights()):
            store[str(index)] = variable.numpy()

    def load_own_variables(self, store: Any) -> None:
        named = self._named_weights()
        if len(store.keys()) != len(named):
            raise ValueError(
                f"The weights file holds {len(store.keys())} variables but this model_fn has "
                f"{len(named)}. Expected weights saved from a model of the same model_fn "
                "(and the same params). Fix: load a file this model saved. Received: "
                f"variables={[name for name, _ in named][:10]}"
            )
        for index, (name, variable) in enumerate(named):
            value = np.asarray(store[str(index)])
            if tuple(value.shape) != tuple(variable.shape):
                raise ValueError(
                    f"Variable {name} has shape {tuple(variable.shape)} but the weights file "
                    f"holds shape {tuple(value.shape)} for it. Fix: load a file this model "
                    f"saved. Received: {name} shape={tuple(value.shape)}"
                )
            variable.assign(value)

    def summary(self, line_length: int | None = None, positions: Any = None,
                print_fn: Callable | None = None, **kwargs: Any) -> None:  # fmt: skip
        """The model_fn's variables by TF1 name with their shapes, and parameter counts."""
        self._build_for(None)
        print_fn = print_fn or print
        width = line_length or 80
        rows = [(name, tuple(v.shape), "" if v.trainable else "non-trainable")
                for name, v in self._named_weights()]  # fmt: skip
        print_fn(f'Model: "{self.name}" (its steps call the model_fn)')
        print_fn("-" * width)
        for name, shape, kind in rows:
            print_fn(f"{name:<48}{str(shape):<20}{kind}")
        print_fn("=" * width)
        total = sum(int(np.prod(v.shape)) for v in self.weights)
        trainable = sum(int(np.prod(v.shape)) for v in self.trainable_weights)
        print_fn(f"Total params: {total:,}")
        print_fn(f"Trainable params: {trainable:,}")
        print_fn(f"Non-trainable params: {total - trainable:,}")

    def _build_for(self, x: Any, y: Any = None) -> None:
        """On a model made from model_dir's checkpoint, the first data traces the model_fn
        and restores the checkpoint (the road does it)."""
        if self.road is not None and not self._store.global_variables().keys() - {"global_step"}:
            self.road.build(self, x, y)

    def _keras_trained(self, failing: bool = False) -> None:
        """Saves what Keras trained. When fit itself is failing, a failing save is logged
        and fit's own exception goes on (it is what the user needs to see)."""
        if self.road is None:
            return
        if not failing:
            self.road.save_keras_training(self)
            return
        try:
            self.road.save_keras_training(self)
        except Exception:  # noqa: BLE001  (fit's exception, being raised, matters more)
            logger.exception("Saving the Keras training after fit failed also failed.")

    def fit(self, x: Any = None, y: Any = None, *args: Any, **kwargs: Any) -> Any:
        """Keras' `fit`; when it ends (or is interrupted) the training is saved to model_dir
        as a checkpoint, so the Estimator's next call continues from it."""
        self._build_for(x, y)
        if not args:  # the bar leaves out the global step (fit_logs.py)
            kwargs["callbacks"] = fit_callbacks(kwargs.get("callbacks"), kwargs.get("verbose", 1))
        try:
            result = global_step_as_int(super().fit(x, y, *args, **kwargs))
        except BaseException:
            self._keras_trained(failing=True)
            raise
        self._keras_trained()
        return result

    def train_on_batch(self, x: Any = None, y: Any = None, *args: Any, **kwargs: Any) -> Any:
        """Keras' `train_on_batch`, saved to model_dir like `fit`."""
        self._build_for(x, y)
        try:
            result = super().train_on_batch(x, y, *args, **kwargs)
        except BaseException:
            self._keras_trained(failing=True)
            raise
        self._keras_trained()
        return result

    def set_weights(self, weights: Any) -> None:
        """Keras' `set_weights`; the weights are then saved to model_dir, so the
        Estimator's next call uses them (as after `fit`)."""
        self._require_variables("set_weights")
        super().set_weights(weights)
        self._keras_set_weights()

    def load_weights(self, filepath: Any, *args: Any, **kwargs: Any) -> None:
        """Keras' `load_weights`; the weights are then saved to model_dir, so the
        Estimator's next call uses them (as after `fit`)."""
        self._require_variables("load_weights")
        super().load_weights(filepath, *args, **kwargs)
        self._keras_set_weights()

    def _require_variables(self, what: str) -> None:
        if not self._store.global_variables().keys() - {"global_step"}:
            raise ValueError(
                f"keras_model.{what}() needs the model_fn's variables, and they do not exist "
                "yet: the model_fn creates them when it first sees data. Expected a model "
                "that trained or saw data. Fix: call est.train(...) first, or fit / evaluate "
                f"/ predict on the keras_model, then {what}(). "
                f"Received: variables={sorted(self._store.global_variables())}"
            )

    def _keras_set_weights(self) -> None:
        if self.road is not None:
            self.road.save_keras_weights(self)

    def evaluate(self, x: Any = None, y: Any = None, *args: Any, **kwargs: Any) -> Any:
        self._build_for(x, y)
        return super().evaluate(x, y, *args, **kwargs)

    def predict(self, x: Any, *args: Any, **kwargs: Any) -> Any:
        self._build_for(x)
        return super().predict(x, *args, **kwargs)

    def save(self, filepath: Any, *args: Any, **kwargs: Any) -> None:
        path = str(filepath)
        stem = path[: -len(suffix)] if (suffix := os.path.splitext(path)[1]) else path
        raise NotImplementedError(
            "This model's steps call a model_fn (Python code), which a .keras / .h5 file "
            "cannot carry: it saves layers and their configs, and this model has none. "
            "Expected one of: a SavedModel to serve (and to reload with "
            "keras.layers.TFSMLayer), the weights, or the checkpoints in model_dir (the "
            f"Estimator's). Fix: keras_model.export({stem!r}) (a SavedModel folder), "
            f"keras_model.save_weights({stem + '.weights.h5'!r}), or est.latest_checkpoint() "
            f"(already written by train() and fit()). Received: filepath={path!r}"
        )

    def export(self, filepath: Any, format: str = "tf_saved_model", verbose: Any = None,
               input_signature: Any = None, **kwargs: Any) -> None:  # fmt: skip
        """A SavedModel for serving at `filepath` (its `serving_default` signature takes
        the features), from the current weights; `input_signature`: the features' specs
        (default: those the model was last traced with)."""
        if format != "tf_saved_model":
            raise ValueError(
                "This model exports the model_fn's PREDICT graph as a TensorFlow SavedModel "
                f"only. Fix: export(path) or export(path, format='tf_saved_model'). "
                f"Received: format={format!r}"
            )
        if self.road is None:
            raise ValueError(
                "This EstimatorModel is not attached to an Estimator. Fix: export through "
                "est.keras_model (or est.export_saved_model). Received: road=None"
            )
        self.road.export(self, str(filepath), input_signature)

    def compile(self, optimizer: Any = None, **kwargs: Any) -> None:
        """Keras' `compile`. The model_fn's train_op trains; without an `optimizer` the
        model gets one that applies nothing and counts the global step as its iterations,
        as Keras callbacks expect of `model.optimizer`."""
        super().compile(optimizer=optimizer or GlobalStepOptimizer(self._ke_global_step), **kwargs)

    def reset_metrics(self) -> None:
        super().reset_metrics()
        self._store.reset_locals()
