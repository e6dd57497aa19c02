"""Estimator: train / evaluate / predict a model_fn on Keras 3 (tf.estimator 2.15 contract)."""

from __future__ import annotations

import contextlib
import copy
import functools
import logging
import math
import os
import tempfile
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import tensorflow as tf

from keras_estimator.checkpoint import checkpoint_files as ckpt_lib
from keras_estimator.checkpoint.model_dir_lock import hold_training_lock
from keras_estimator.checkpoint.warm_start import resolve_warm_start
from keras_estimator.distribute import parameter_servers
from keras_estimator.engine.model import EstimatorModel
from keras_estimator.engine.output_keys import HOOKS_KEY
from keras_estimator.engine.summaries import write_scalars
from keras_estimator.hooks.keras_callbacks import KerasCallbacks
from keras_estimator.hooks.runner import validate_hooks, validate_listeners
from keras_estimator.runtime.history import TrainingHistory
from keras_estimator.runtime.input_fn_calls import call_input_fn
from keras_estimator.runtime.input_pipeline import with_parallel_input
from keras_estimator.runtime.interrupts import GracefulInterrupt
from keras_estimator.runtime.keras_road import KerasRoad
from keras_estimator.runtime.model_fn_call import ModelFnCaller, verify_model_fn_args
from keras_estimator.runtime.model_runtime import ModelRuntime
from keras_estimator.runtime.predictions import select_keys, split_examples
from keras_estimator.runtime.saved_model_export import write_saved_model
from keras_estimator.runtime.session_config import apply_session_config
from keras_estimator.runtime.training_loop import make_saver, run_training
from keras_estimator.seam import internals
from keras_estimator.spec.mode_keys import ModeKeys
from keras_estimator.spec.run_config import RunConfig, TaskType
from keras_estimator.utils.garbage_collection import long_lived_objects_frozen
from keras_estimator.utils.log import notice

logger = logging.getLogger("keras_estimator")

_UNTIL_EXHAUSTED = np.iinfo(np.int64).max


def _resolve_config(config: Any, model_dir: Any) -> RunConfig:
    if config is None:
        config = RunConfig()
        logger.info("Using default config.")
    if not isinstance(config, RunConfig):
        raise ValueError(f"config must be an instance of `RunConfig`, but provided {config}.")
    model_dir = os.fspath(model_dir) if model_dir is not None else None
    if model_dir is not None and config.model_dir is not None and model_dir != config.model_dir:
        raise ValueError(
            "`model_dir` are set both in constructor and `RunConfig`, but with different "
            f"values. In constructor: '{model_dir}', in `RunConfig`: '{config.model_dir}' "
        )
    model_dir = model_dir or config.model_dir
    if model_dir is None:
        model_dir = tempfile.mkdtemp()
        logger.warning("Using temporary folder as model directory: %s", model_dir)
    if tf.io.gfile.exists(model_dir) and not tf.io.gfile.isdir(model_dir):
        raise ValueError(
            f"model_dir {model_dir!r} exists and is a file; expected a directory (or a path "
            "that does not exist yet). Fix: pass another model_dir."
        )
    if config.model_dir != model_dir:
        config = config.replace(model_dir=model_dir)
    return config


def _require_eager_execution() -> None:
    """tf.estimator built TF1 graphs of its own; keras_estimator's steps are compiled Keras
    functions, which need eager execution outside them (and resource variables)."""
    if internals.eager_execution_disabled():
        raise RuntimeError(
            "An Estimator was created with eager execution disabled (by "
            "tf.compat.v1.disable_eager_execution() or disable_v2_behavior()). keras_estimator "
            "runs the model_fn inside compiled Keras steps, which need eager execution and "
            "resource variables; tf.estimator built graphs of its own instead. Fix: remove the "
            "call, or run the script with `keras-estimator run script.py` (or call "
            "keras_estimator.install() before the call), which keeps eager execution on and "
            "applies the rest. Received: tf.executing_eagerly()=False"
        )


def _eagerly(method: Callable) -> Callable:
    """Runs an Estimator method eagerly, even when called in TF1 graph mode (inside
    `tf.Graph().as_default()`, or after an `install()`-handled `disable_eager_execution()`):
    tf.estimator built its own graph there; keras_estimator's steps are compiled functions
    run eagerly. Eager execution switched off process-wide is refused at construction."""

    @functools.wraps(method)
    def eager_method(*args: Any, **kwargs: Any) -> Any:
        with _in_call():
            return method(*args, **kwargs)

    return eager_method


@contextlib.contextmanager
def _in_call() -> Iterator[None]:
    """Where an Estimator call runs: eagerly, with the objects older than the call out of
    the garbage collector's walk (utils/garbage_collection.py)."""
    with internals.eager_mode(), long_lived_objects_frozen():
        yield


def _one_trainer(train: Callable) -> Callable:
    """train() holds model_dir's lock on the chief (checkpoint/model_dir_lock.py)."""

    @functools.wraps(train)
    def locked_train(self: Estimator, *args: Any, **kwargs: Any) -> Any:
        with hold_training_lock(self._model_dir, self._config.is_chief):
            return train(self, *args, **kwargs)

    return locked_train


# predict(): batches run one per call first (tracing the chunked loop costs about as much as
# ~100 batches run alone), then in compiled chunks doubling up to _PREDICT_CHUNK batches.
_PREDICT_BATCHES_ALONE = 64
_PREDICT_CHUNK = 32


class Estimator:
    """Trains, evaluates and predicts with a `model_fn`, as `tf.estimator.Estimator` did.

    The model_fn runs inside the compiled steps of a Keras 3 model (`EstimatorModel`);
    variables keep their TF1 names and are checkpointed to `model_dir` in the
    tf.estimator layout, so training resumes from (and leaves) ordinary TF1 checkpoints.

    Example:
        >>> est = Estimator(model_fn, model_dir="runs/a", params={"lr": 1e-3})
        >>> est.train(train_input_fn, max_steps=1000)
        >>> est.evaluate(eval_input_fn)["accuracy"]
        >>> next(est.predict(predict_input_fn))
    """

    def __init__(
        self,
        model_fn: Callable,
        model_dir: str | os.PathLike | None = None,
        config: RunConfig | None = None,
        params: dict | None = None,
        warm_start_from: Any = None,
    ) -> None:
        _require_eager_execution()
        # As tf.estimator: the config first (a bad one is reported before the model_fn).
        self._config = _resolve_config(config, model_dir)
        if model_fn is None:
            raise ValueError("model_fn must be provided to Estimator.")
        if not callable(model_fn):
            raise TypeError(f"model_fn must be callable, given: {model_fn!r}")
        verify_model_fn_args(model_fn, params)
        self._model_fn = model_fn
        self._model_dir = self._config.model_dir
        self._params = copy.deepcopy(params or {})
        warm_start_settings = resolve_warm_start(warm_start_from)
        self.history = TrainingHistory(self._model_dir)
        logger.info("Using config: %s", self._config)
        apply_session_config(self._config.session_config)
        self._model_fn_caller = ModelFnCaller(
            model_fn, self._config, self._model_fn_params, self._as_estimator_spec
        )
        self._runtime = ModelRuntime(self._model_fn_caller, self._config, warm_start_settings)
        self._keras_road = KerasRoad(self._runtime)
        try:
            existing = ckpt_lib.latest_checkpoint(self._model_dir)
        except ckpt_lib.BrokenCheckpointStateError as exc:
            logger.warning("%s", exc)  # train / evaluate raise it; predict with a path works
            existing = None
        if existing is not None:
            notice(logger, "model_dir %s has a checkpoint at step %s: training and evaluation "
                   "continue from it.", self._model_dir, existing.rsplit("-", 1)[-1])  # fmt: skip
        if self._config.device_fn is not None:
            logger.warning(
                "RunConfig device_fn is not applied by keras_estimator; variables and ops are "
                "placed by TensorFlow (or the distribution strategy)."
            )

    def __repr__(self) -> str:
        """Class, model_fn, model_dir, and the params / config that are not defaults."""
        shown = []
        if type(self) is Estimator or "model_fn" in type(self).__init__.__code__.co_varnames:
            shown.append(f"model_fn={getattr(self._model_fn, '__name__', self._model_fn)}")
        shown.append(f"model_dir={self._model_dir!r}")
        if self._params:
            shown.append(f"params={self._params!r}")
        config = repr(self._config.replace(model_dir=None))
        if config != "RunConfig()":
            shown.append(f"config={config}")
        return f"{type(self).__name__}({', '.join(shown)})"

    # -- public properties --------------------------------------------------------
    model_dir = property(lambda self: self._model_dir)
    config = property(lambda self: copy.deepcopy(self._config))
    params = property(lambda self: copy.deepcopy(self._params))

    @property
    def model_fn(self) -> Callable:
        """The model_fn bound to this Estimator's params and config, as tf.estimator gave it:
        `model_fn(features, labels, mode, config)` returning an EstimatorSpec."""

        def public_model_fn(features: Any, labels: Any, mode: str, config: Any) -> Any:
            caller = ModelFnCaller(self._model_fn, config, self._model_fn_params,
                                   self._as_estimator_spec)  # fmt: skip
            return caller(features, labels, mode)

        return public_model_fn

    @property
    def keras_model(self) -> EstimatorModel | None:
        """The `EstimatorModel` (a compiled `keras.Model`) behind this Estimator: the same
        variables and the same model_dir. None before training when model_dir has no
        checkpoint.

        Its steps call the model_fn, so Keras can take over: `fit` (with Keras callbacks:
        ModelCheckpoint with save_weights_only, BackupAndRestore, EarlyStopping, ...) on a
        tf.data input of the input_fn's structure, `evaluate`, `predict`, `summary`,
        `save_weights` / `load_weights`, and `export(path)` (a SavedModel for serving).
        When `fit` ends (or is interrupted) its training is saved to model_dir as a
        checkpoint at the model's global step: the next `evaluate()` sees those weights and
        `train()` counts on from that step. Over a trained model_dir, a new Estimator's
        keras_model is built from the latest checkpoint on its first data. `save("m.keras")`
        raises: a .keras file cannot carry the model_fn; use `export()` or `save_weights`.

        Example:
            >>> est.train(input_fn, steps=20)
            >>> est.keras_model.fit(dataset, steps_per_epoch=300)  # global step 320, saved
            >>> est.evaluate(eval_input_fn)["global_step"]
            320
        """
        model = self._runtime.model
        if model is None:
            try:
                trained = self.latest_checkpoint() is not None
            except ckpt_lib.BrokenCheckpointStateError:
                trained = False
            if not trained:
                return None
            model = self._runtime.model = self._runtime.build_model()
        self._keras_road.attach(model)
        if not model.compiled:
            model.compile()
        model.built = True  # its variables are the model_fn's (or come on its first data)
        return model

    def eval_dir(self, name: str | None = None) -> str:
        """Where `evaluate(name=...)` writes its event files: model_dir/eval[_name]."""
        return os.path.join(self._model_dir, "eval" if not name else f"eval_{name}")

    def latest_checkpoint(self) -> str | None:
        """The newest checkpoint prefix in `model_dir`, or None."""
        return ckpt_lib.latest_checkpoint(self._model_dir)

    @_eagerly
    def get_variable_names(self) -> list[str]:
        """Names of all variables in the latest checkpoint."""
        return [name for name, _ in tf.train.list_variables(self._require_checkpoint())]

    @_eagerly
    def get_variable_value(self, name: str) -> np.ndarray:
        """The value of variable `name` in the latest checkpoint."""
        return tf.train.load_variable(self._require_checkpoint(), name)

    def _require_checkpoint(self) -> str:
        path = self.latest_checkpoint()
        if path is None:
            raise ValueError(f"Could not find trained model in model_dir: {self._model_dir}.")
        return path

    # -- what input_fn and model_fn get ---------------------------------------------------
    # Extension points (TPUEstimator): what input_fn / model_fn get, what model_fn returns.
    def _call_input_fn(
        self,
        input_fn: Callable,
        mode: str,
        input_context: Any = None,
        repeat_tensors: bool = False,
    ) -> tf.data.Dataset:
        return call_input_fn(
            input_fn, mode, self.params, self.config, input_context, repeat_tensors=repeat_tensors
        )

    def _input_for(self, input_fn: Callable, mode: str, repeat_tensors: bool = False) -> Any:
        """input_fn's dataset; under a strategy, distributed as tf.estimator did.

        input_fn runs once per input pipeline with a `tf.distribute.InputContext`; its
        batches are per-replica batches, handed to the replicas in turn. `repeat_tensors`:
        tensors (not a Dataset) are fed on every step, as tf.estimator's session fed them.
        """
        strategy = self._runtime.strategy_for(mode)

        def call(context: Any = None) -> tf.data.Dataset:
            return with_parallel_input(self._call_input_fn(input_fn, mode, context, repeat_tensors))

        if strategy is None:
            return call()
        if parameter_servers.is_parameter_server_strategy(strategy):
            return parameter_servers.per_worker_dataset(strategy, call)
        return strategy.distribute_datasets_from_function(call)

    def _replace_config(self, config: RunConfig) -> None:
        """A subclass's config change (TPUEstimator's steps_per_execution) reaches the
        model_fn and the runtime."""
        self._config = self._model_fn_caller.config = self._runtime.config = config

    def _model_fn_params(self, mode: str) -> dict:
        return self.params

    def _as_estimator_spec(self, result: Any) -> Any:
        return result

    def _serves_the_chief(self) -> bool:
        """A worker or ps task of a parameter-server cluster: it runs a server only."""
        return parameter_servers.has_parameter_servers(self._config) and (
            self._config.task_type not in (TaskType.CHIEF, TaskType.MASTER)
        )

    @contextlib.contextmanager
    def _peer_failures_explained(self) -> Iterator[None]:
        """A task of a multi-worker job that died shows up as a collective op failing."""
        try:
            yield
        except (tf.errors.UnavailableError, tf.errors.AbortedError) as exc:
            if self._runtime.strategy_for(ModeKeys.TRAIN) is None:
                raise
            checkpoint = self.latest_checkpoint() if self._config.is_chief else None
            raise type(exc)(
                exc.node_def,
                exc.op,
                "Another task of the distributed training job stopped responding, so this "
                f"one cannot continue ({exc.message.splitlines()[0]}). "
                + (f"The last checkpoint, {checkpoint}, is intact. " if checkpoint else "")
                + "Fix: restart every task of the job; training resumes from the latest "
                "checkpoint in model_dir.",
            ) from exc

    # -- train ----------------------------------------------------------------------------
    @_eagerly
    @_one_trainer
    def train(
        self,
        input_fn: Callable,
        hooks: list | None = None,
        steps: int | None = None,
        max_steps: int | None = None,
        saving_listeners: list | None = None,
    ) -> Estimator:
        """Trains for `steps` more steps, or until the global step reaches `max_steps`.

        Stops early when `input_fn`'s data is exhausted or a hook requests a stop.
        `hooks` may hold `tf.compat.v1.train.SessionRunHook`s and Keras callbacks;
        `saving_listeners` are `CheckpointSaverListener`s. Returns `self`.

        Example:
            >>> est.train(train_input_fn, max_steps=1000, hooks=[StopAtStepHook(num_steps=500)])
        """
        if self._config.task_type in (TaskType.EVALUATOR, TaskType.PS):
            raise ValueError(
                "Train has been called wrong configuration. Please use "
                "tf.estimator.train_and_evaluate which calls proper API according to given "
                f"configuration. Current configuration: {self._config}. An evaluator or ps task "
                "does not train itself; train_and_evaluate runs the right loop for each task. "
                f"Received: task_type={self._config.task_type!r}"
            )
        if steps is not None and max_steps is not None:
            raise ValueError("Can not provide both steps and max_steps.")
        if steps is not None and steps <= 0:
            raise ValueError(f"Must specify steps > 0, given: {steps}")
        if max_steps is not None and max_steps <= 0:
            raise ValueError(f"Must specify max_steps > 0, given: {max_steps}")
        # Scripts compute step counts by division (`examples * 1000 / batch_size`); 2.15's
        # StopAtStepHook stopped at the first global step >= the float, i.e. its ceiling.
        if steps is not None and steps != int(steps):
            steps = math.ceil(steps)
        if max_steps is not None and max_steps != int(max_steps):
            max_steps = math.ceil(max_steps)
        hooks, callbacks = validate_hooks(hooks)
        listeners = validate_listeners(saving_listeners)
        if self._serves_the_chief():
            parameter_servers.serve(self._config, self._model_dir, max_steps)
            return self
        checkpoint = self.latest_checkpoint()
        if max_steps is not None and checkpoint is not None:
            done = int(tf.train.load_variable(checkpoint, "global_step"))
            if done >= max_steps:
                notice(
                    logger,
                    "Skipping training since max_steps has already saved: the checkpoint in "
                    "%s is at step %d >= max_steps=%d. Pass a larger max_steps (or steps=N) "
                    "to train on, or a new model_dir to start over.",
                    self._model_dir, done, max_steps,
                )  # fmt: skip
                return self

        runtime = self._runtime
        runtime.seed()
        dataset = self._input_for(input_fn, ModeKeys.TRAIN)
        # A call that fails before its first step leaves model_dir as it was.
        with runtime.summaries_for(ModeKeys.TRAIN) as writer:
            loop, runner = runtime.prepare(
                ModeKeys.TRAIN, dataset, checkpoint, tuple(hooks), writer
            )
            saver = make_saver(
                self._model_dir,
                runtime.model.store.global_variables(),
                self._config,
                runner,
                listeners,
                self._model_fn_caller.train_scaffold_saver,
            )
            step = runtime.global_step_value()
            runtime.training_starts_at(step)  # from here, model_dir keeps the event file
            if saver is not None:
                self._write_graph_files(saver, writer)
            runtime.model.train_call_start.assign(step)
            target = max_steps if max_steps is not None else step + steps if steps else None
            listeners = saver.listeners if saver is not None else []
            for listener in listeners:
                listener.begin()
            if saver is not None and ckpt_lib.latest_checkpoint(saver.directory) is None:
                saver.save(step)
            runner.after_create_session()
            keras_callbacks = KerasCallbacks(callbacks, runtime.model, "train")
            with (
                runtime.scope(ModeKeys.TRAIN),  # traced in it: called elsewhere, it would retrace
                self._peer_failures_explained(),
                GracefulInterrupt(sigterm=self._config.save_on_sigterm) as interrupt,
            ):
                step = run_training(
                    loop,
                    dataset,
                    self._config,
                    saver,
                    runner,
                    keras_callbacks,
                    runtime.summary_writer(self._model_dir) if self._config.is_chief else None,
                    step,
                    target,
                    on_loss=self.history.record_loss,
                    interrupt=interrupt,
                )
            if self._config.is_chief:
                runtime.summary_writer(self._model_dir).flush()
            runtime.flush_model_fn_writers()
            runner.end()
            if saver is not None:
                saver.end(step)
        if interrupt.requested:
            saved = f"; the checkpoint for step {step} is in {saver.directory}" if saver else ""
            raise interrupt.stop_error(step, saved)
        return self

    def _write_graph_files(self, saver: Any, writer: Any) -> None:
        """model_dir's graph files as 2.15 wrote them when train() began: graph.pbtxt, the
        graph in the event file (TensorBoard's graph tab), `.meta` files with each
        checkpoint when RunConfig.checkpoint_save_graph_def (2.15's default)."""
        step_graph = self._runtime.step_graph(ModeKeys.TRAIN)
        saver.write_graph(step_graph, self._config.checkpoint_save_graph_def)
        if writer is not None:
            with writer.as_default():
                tf.summary.graph(step_graph.graph_def)

    # -- evaluate ----------------------------------------------------------------------
    def evaluate(
        self,
        input_fn: Callable,
        steps: int | None = None,
        hooks: list | None = None,
        checkpoint_path: str | None = None,
        name: str | None = None,
    ) -> dict[str, Any]:
        """Evaluates on `input_fn`'s data (all of it, or `steps` batches).

        Returns the metrics of `eval_metric_ops` plus `loss` (the mean of per-batch losses)
        and `global_step`, and writes them to `eval_dir(name)` for TensorBoard.

        Example:
            >>> est.evaluate(eval_input_fn)["accuracy"]
        """
        return self._evaluate(input_fn, steps, hooks, checkpoint_path, name, in_memory=False)

    @_eagerly
    def _evaluate(
        self,
        input_fn: Callable,
        steps: int | None,
        hooks: list | None,
        checkpoint_path: str | None,
        name: str | None,
        in_memory: bool,
    ) -> dict[str, Any]:
        """evaluate(); `in_memory` evaluates the variables as they are now (during train)."""
        # Outside train()'s strategy scope when a saving listener evaluates (2.15's fresh graph).
        with self._runtime.running(ModeKeys.EVAL):
            if steps is not None and steps <= 0:
                raise ValueError(f"Must specify steps > 0, given: {steps}")
            hooks, callbacks = validate_hooks(hooks)
            checkpoint = None if in_memory else self._checkpoint_for(checkpoint_path, "evaluate")
            runtime = self._runtime
            if not in_memory:
                runtime.seed()
            # Constant tensors ran `steps` times under tf.estimator (one batch without steps:
            # tf.estimator would have evaluated them forever).
            dataset = self._input_for(input_fn, ModeKeys.EVAL, repeat_tensors=steps is not None)
            cardinality = dataset.cardinality  # a distributed dataset's is a property
            cardinality = int(cardinality() if callable(cardinality) else cardinality)
            if steps is None and cardinality == tf.data.INFINITE_CARDINALITY:
                raise ValueError(  # tf.estimator 2.15 evaluated such input forever
                    "evaluate() was given endless input (the dataset repeats forever) and no "
                    "`steps`, so it would never finish. Expected a dataset that ends, or a "
                    "number of batches. Fix: remove `.repeat()` (or use num_epochs=1 in "
                    "numpy_input_fn / pandas_input_fn) for evaluation, or pass steps=N. "
                    "Received: steps=None, input cardinality=infinite."
                )
            loop, runner = runtime.prepare(
                ModeKeys.EVAL, dataset, checkpoint, tuple(hooks), keep_variables=in_memory,
                follow_latest=not checkpoint_path,
            )  # fmt: skip
            model = runtime.model_for(ModeKeys.EVAL)  # its own under its own eval_distribute
            model.store.reset_locals()
            limit = steps if steps is not None else _UNTIL_EXHAUSTED
            runner.after_create_session()
            keras_callbacks = KerasCallbacks(callbacks, model, "test")
            iterator = iter(dataset)
            if runner.active or keras_callbacks.active:
                ran, done = 0, 0
                logs = None
                while done < limit:
                    runner.before_step()
                    keras_callbacks.batch_begin(done)
                    fetches = runner.fetch_tensors()
                    step_loop = loop.with_fetches(fetches) if fetches else loop
                    ran, step_logs = step_loop(iterator, tf.constant(1, tf.int64))
                    if not int(ran):
                        break
                    done, logs = done + 1, step_logs
                    values = {k: v.numpy() for k, v in logs.get(HOOKS_KEY, {}).items()}
                    stop = runner.after_step(values) if runner.active else False
                    batch_logs = {
                        k: float(v)
                        for k, v in logs.items()
                        if k != HOOKS_KEY and tf.is_tensor(v) and v.shape.rank == 0
                    }
                    if keras_callbacks.batch_end(done - 1, batch_logs) or stop:
                        break
                ran = done
                if logs is None:
                    ran, logs = loop(iterator, tf.constant(0, tf.int64))
            else:
                ran, logs = loop(iterator, tf.constant(limit, tf.int64))
            runner.end()
            runtime.flush_model_fn_writers(ModeKeys.EVAL)
            keras_callbacks.end(
                {
                    k: float(v)
                    for k, v in logs.items()
                    if k != HOOKS_KEY and tf.is_tensor(v) and v.shape.rank == 0
                }
            )
            if int(ran) == 0:
                # tf.estimator reported the metrics' initial values in this case; so do we.
                logger.warning("Evaluation ran no step: input_fn yielded no data.")
            # A metric's value may be a nested structure of tensors (tf.estimator kept it).
            # 2.15's order: the metrics (loss among them) sorted by name, then global_step.
            results = {
                key: tf.nest.map_structure(lambda t: t.numpy(), logs[key])
                for key in sorted(logs)
                if key != HOOKS_KEY
            }
            results["global_step"] = runtime.global_step_value(ModeKeys.EVAL)
            shown = ", ".join(f"{k} = {v}" for k, v in sorted(results.items()))
            logger.info("Saving dict for global step %d: %s", results["global_step"], shown)
            eval_dir = self.eval_dir(name)
            metrics = {k: v for k, v in results.items() if k != "global_step"}
            write_scalars(runtime.summary_writer(eval_dir), metrics, results["global_step"])
            self.history.record_evaluation(name, results["global_step"], results)
            return results

    def _checkpoint_for(self, checkpoint_path: str | None, what: str) -> str | None:
        if checkpoint_path:
            if tf.io.gfile.isdir(checkpoint_path):
                found = ckpt_lib.latest_checkpoint(checkpoint_path)
                if found is None:
                    raise ValueError(f"Couldn't find trained model at {checkpoint_path}.")
                return found
            return checkpoint_path
        checkpoint = self.latest_checkpoint()
        if checkpoint is None:
            logger.info(
                "Could not find trained model in model_dir: %s, running initialization to %s.",
                self._model_dir,
                what,
            )
        return checkpoint

    # -- predict --------------------------------------------------------------------------
    def predict(
        self,
        input_fn: Callable,
        predict_keys: str | list[str] | None = None,
        hooks: list | None = None,
        checkpoint_path: str | None = None,
        yield_single_examples: bool = True,
    ) -> Iterator[Any]:
        """Yields predictions for `input_fn`'s features lazily, one example (or batch) at a time.

        `hooks` may hold SessionRunHooks and Keras callbacks (called as `model.predict`
        calls them, with the batch's predictions as `logs["outputs"]`).

        Example:
            >>> for p in est.predict(input_fn, predict_keys=["probabilities"]):
            ...     print(p["probabilities"])
        """
        hooks, callbacks = validate_hooks(hooks)
        if isinstance(predict_keys, str):
            predict_keys = [predict_keys]
        # Eager inside each step only: while suspended at a `yield`, the caller's mode (and
        # strategy scope) holds.
        with _in_call(), self._runtime.running(ModeKeys.PREDICT):
            checkpoint = self._checkpoint_for(checkpoint_path, "predict")
            runtime = self._runtime
            runtime.seed()
            dataset = self._input_for(input_fn, ModeKeys.PREDICT)
            predict_fn, runner = runtime.prepare(
                ModeKeys.PREDICT, dataset, checkpoint, tuple(hooks),
                follow_latest=not checkpoint_path,
            )  # fmt: skip
            runner.after_create_session()
            keras_callbacks = KerasCallbacks(callbacks, runtime.model, "predict")
            batches = iter(dataset)
        index = 0
        watched = runner.active or keras_callbacks.active
        chunk = 0  # batches per compiled call, once unwatched predictions run in chunks
        while True:
            if not watched and predict_fn.chunkable and index >= _PREDICT_BATCHES_ALONE:
                # No hook or callback sees the batches: several run in one compiled call.
                chunk = min(max(2 * chunk, 2), _PREDICT_CHUNK)
                with _in_call(), runtime.running(ModeKeys.PREDICT):
                    computed = predict_fn.chunk(batches, chunk)
                    examples = [
                        example
                        for predictions in computed
                        for example in split_examples(
                            select_keys(predictions, predict_keys), yield_single_examples
                        )
                    ]
                yield from examples
                index += len(computed)
                if len(computed) < chunk:
                    break
                continue
            with _in_call(), runtime.running(ModeKeys.PREDICT):
                batch = next(batches, None)
                if batch is None:
                    if runner.active:
                        # tf.estimator asked for one more batch: its hooks' before_run ran,
                        # then the input's end (OutOfRangeError) skipped after_run.
                        runner.before_step()
                    break
                if runner.active:
                    runner.before_step()
                keras_callbacks.batch_begin(index)
                fetches = runner.fetch_tensors()
                step = predict_fn.with_fetches(fetches) if fetches else predict_fn
                predictions, hook_values = step(batch)
                predictions = select_keys(predictions, predict_keys)
                stop = runner.active and runner.after_step(
                    {k: v.numpy() for k, v in hook_values.items()}
                )
                stop = keras_callbacks.batch_end(index, {"outputs": predictions}) or stop
                examples = list(split_examples(predictions, yield_single_examples))
            yield from examples
            index += 1
            if stop:
                break
        with _in_call(), runtime.running(ModeKeys.PREDICT):
            keras_callbacks.end({})
            runner.end()
            runtime.flush_model_fn_writers()

    # -- export --------------------------------------------------------------------------
    @_eagerly
    def export_saved_model(
        self,
        export_dir_base: str | os.PathLike,
        serving_input_receiver_fn: Callable,
        assets_extra: dict | None = None,
        as_text: bool = False,
        checkpoint_path: str | None = None,
        experimental_mode: str = ModeKeys.PREDICT,
    ) -> bytes:
        """Exports the model for serving to `<export_dir_base>/<timestamp>/`; returns that path.

        The receiver fn and the PREDICT model_fn are traced; signatures come from the
        EstimatorSpec's `export_outputs` (or `predictions`), variables from the latest
        checkpoint (or `checkpoint_path`). The SavedModel loads with plain TensorFlow:
        `tf.saved_model.load(path).signatures["serving_default"](**inputs)`.

        Example:
            >>> fn = export.build_raw_serving_input_receiver_fn({"x": tf.TensorSpec([None, 4])})
            >>> path = est.export_saved_model("exports", fn)
        """
        with self._runtime.running(ModeKeys.PREDICT):
            return write_saved_model(
                self._runtime,
                os.fspath(export_dir_base),
                serving_input_receiver_fn,
                assets_extra,
                as_text,
                checkpoint_path,
                experimental_mode,
            )

    def experimental_export_all_saved_models(
        self,
        export_dir_base: str | os.PathLike,
        input_receiver_fn_map: dict,
        assets_extra: dict | None = None,
        as_text: bool = False,
        checkpoint_path: str | None = None,
    ) -> bytes:
        """Exports one SavedModel from a `{mode: receiver_fn}` map, as tf.estimator 2.15.

        The PREDICT graph (the servable one) is exported as `export_saved_model` does;
        TRAIN and EVAL graphs (TF1 meta graphs tagged `train` / `eval`) cannot be written
        by TF2's SavedModel saver and raise NotImplementedError.

        Example:
            >>> est.experimental_export_all_saved_models(
            ...     "exports", {ModeKeys.PREDICT: serving_input_receiver_fn})
        """
        modes = sorted(input_receiver_fn_map or {})
        if modes != [ModeKeys.PREDICT]:
            raise NotImplementedError(
                "experimental_export_all_saved_models exports the PREDICT (serving) graph "
                "only: SavedModels with TRAIN / EVAL meta graphs are TF1 graphs that "
                "TensorFlow 2's saver cannot write. Expected input_receiver_fn_map="
                "{ModeKeys.PREDICT: serving_input_receiver_fn}. Fix: drop the other modes. "
                f"Received: input_receiver_fn_map keys={modes}"
            )
        return self.export_saved_model(
            export_dir_base,
            input_receiver_fn_map[ModeKeys.PREDICT],
            assets_extra=assets_extra,
            as_text=as_text,
            checkpoint_path=checkpoint_path,
        )

    def export_savedmodel(
        self,
        export_dir_base: str | os.PathLike,
        serving_input_receiver_fn: Callable,
        assets_extra: dict | None = None,
        as_text: bool = False,
        checkpoint_path: str | None = None,
        strip_default_attrs: bool = False,
    ) -> bytes:
        """Deprecated alias of `export_saved_model` (tf.estimator 1.x's name)."""
        logger.warning("export_savedmodel is deprecated; use export_saved_model.")
        return self.export_saved_model(
            export_dir_base, serving_input_receiver_fn, assets_extra, as_text, checkpoint_path
        )
