"""Estimator: train / evaluate / predict a model_fn on Keras 3 (tf.estimator 2.15 contract)."""

from __future__ import annotations

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
from keras_estimator.hooks.runner import validate_hooks, validate_listeners
from keras_estimator.runtime.call_scope import in_call
from keras_estimator.runtime.eval_call import EvalCall
from keras_estimator.runtime.history import TrainingHistory
from keras_estimator.runtime.input_fn_calls import call_input_fn
from keras_estimator.runtime.input_pipeline import with_parallel_input
from keras_estimator.runtime.keras_road import KerasRoad
from keras_estimator.runtime.model_fn_call import ModelFnCaller, verify_model_fn_args
from keras_estimator.runtime.model_runtime import ModelRuntime
from keras_estimator.runtime.predict_call import PredictCall
from keras_estimator.runtime.saved_model_export import write_saved_model
from keras_estimator.runtime.session_config import apply_session_config
from keras_estimator.runtime.train_call import TrainCall
from keras_estimator.seam import internals
from keras_estimator.spec.mode_keys import ModeKeys
from keras_estimator.spec.run_config import RunConfig, TaskType
from keras_estimator.utils.log import notice

logger = logging.getLogger("keras_estimator")


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
        with in_call():
            return method(*args, **kwargs)

    return eager_method


def _one_trainer(train: Callable) -> Callable:
    """train() holds model_dir's lock on the chief (checkpoint/model_dir_lock.py)."""

    @functools.wraps(train)
    def locked_train(self: Estimator, *args: Any, **kwargs: Any) -> Any:
        with hold_training_lock(self._model_dir, self._config.is_chief):
            return train(self, *args, **kwargs)

    return locked_train


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
        config = _resolve_config(config, model_dir)
        if model_fn is None:
            raise ValueError("model_fn must be provided to Estimator.")
        if not callable(model_fn):
            raise TypeError(f"model_fn must be callable, given: {model_fn!r}")
        verify_model_fn_args(model_fn, params)
        self._model_fn = model_fn
        self._model_dir = config.model_dir
        self._params = copy.deepcopy(params or {})
        warm_start_settings = resolve_warm_start(warm_start_from)
        self.history = TrainingHistory(self._model_dir)
        logger.info("Using config: %s", config)
        apply_session_config(config.session_config)
        self._model_fn_caller = ModelFnCaller(
            model_fn, config, self._model_fn_params, self._as_estimator_spec
        )
        # The config is the runtime's (one place: what a subclass replaces reaches the calls).
        self._runtime = ModelRuntime(self._model_fn_caller, warm_start_settings)
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
    _config = property(lambda self: self._runtime.config)
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
    def keras_model(self) -> EstimatorModel:
        """The `EstimatorModel` (a compiled `keras.Model`) behind this Estimator: the same
        variables and the same model_dir. Before any call its variables come on its first
        data (restored from model_dir's latest checkpoint when there is one).

        Its steps call the model_fn, so Keras can take over: `fit` (with Keras callbacks:
        ModelCheckpoint with save_weights_only, BackupAndRestore, EarlyStopping, ...) on a
        tf.data input of the input_fn's structure, `evaluate`, `predict`, `summary`,
        `save_weights` / `load_weights`, and `export(path)` (a SavedModel for serving).
        When `fit` ends (or is interrupted) its training is saved to model_dir as a
        checkpoint at the model's global step: the next `evaluate()` sees those weights and
        `train()` counts on from that step. Over a trained model_dir, a new Estimator's
        keras_model is built from the latest checkpoint on its first data. `set_weights` /
        `load_weights` save the weights to model_dir: the next call uses them. `save("m.keras")`
        raises: a .keras file cannot carry the model_fn; use `export()` or `save_weights`.

        Example:
            >>> est.train(input_fn, steps=20)
            >>> est.keras_model.fit(dataset, steps_per_epoch=300)  # global step 320, saved
            >>> est.evaluate(eval_input_fn)["global_step"]
            320
        """
        model = self._runtime.ensure_model()
        self._keras_road.attach(model)
        if not model.compiled:
            model.compile()
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

    # 2.15's graph-building methods, for subclasses that build a graph of their own and run
    # it in their own Session (AdaNet's bookkeeping phase): they work in the caller's graph.
    def _create_and_assert_global_step(self, graph: tf.Graph) -> tf.Variable:
        """The global step of `graph`, made there (2.15: an int64 variable `global_step`).

        Raises:
            ValueError: if `graph` already has a global step that is not one.
        """
        with graph.as_default():
            step = tf.compat.v1.train.get_or_create_global_step(graph)
        if step.dtype.base_dtype != tf.int64:
            raise ValueError(
                f"The graph's global step is {step.dtype.name}; expected int64. Fix: create it "
                "with tf.compat.v1.train.get_or_create_global_step()."
            )
        return step

    def _call_model_fn(self, features: Any, labels: Any, mode: str, config: Any) -> Any:
        """The model_fn's EstimatorSpec for `mode`, built in the current graph (2.15).

        `config` replaces the Estimator's own for this call, as it did in 2.15.
        """
        caller = self._model_fn_caller
        kept, caller.config = caller.config, config
        try:
            return caller(features, labels, mode)
        finally:
            caller.config = kept

    def _replace_config(self, config: RunConfig) -> None:
        """A subclass's config change (TPUEstimator's steps_per_execution) reaches the
        model_fn and the runtime."""
        self._model_fn_caller.config = config

    def _model_fn_params(self, mode: str) -> dict:
        return self.params

    def _as_estimator_spec(self, result: Any) -> Any:
        return result

    def _serves_the_chief(self) -> bool:
        """A worker or ps task of a parameter-server cluster: it runs a server only."""
        return parameter_servers.has_parameter_servers(self._config) and (
            self._config.task_type not in (TaskType.CHIEF, TaskType.MASTER)
        )

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
        # StopAtStepHook stopped at the first global step >= the float, i.e. its ceiling
        # (an int: a whole float such as 15.0 too).
        if steps is not None:
            steps = math.ceil(steps)
        if max_steps is not None:
            max_steps = math.ceil(max_steps)
        hooks, callbacks = validate_hooks(hooks)
        listeners = validate_listeners(saving_listeners)
        if self._serves_the_chief():
            parameter_servers.serve(self._config, self._model_dir, max_steps)
            return self
        train = TrainCall(self._runtime, self._input_for, self.history)
        train.run(input_fn, hooks, callbacks, listeners, steps, max_steps)
        return self

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
            evaluation = EvalCall(self._runtime, self._input_for, self.history)
            return evaluation.run(
                input_fn, steps, hooks, callbacks, checkpoint, self.eval_dir(name), name,
                in_memory=in_memory, follow_latest=not checkpoint_path,
            )  # fmt: skip

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
        prediction = PredictCall(self._runtime, self._input_for)
        yield from prediction.run(
            input_fn, predict_keys, hooks, callbacks,
            lambda: self._checkpoint_for(checkpoint_path, "predict"),
            follow_latest=not checkpoint_path, yield_single_examples=yield_single_examples,
        )  # fmt: skip

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
