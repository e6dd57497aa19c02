"""TrainSpec, EvalSpec and train_and_evaluate (local mode), as in tf.estimator 2.15.

`train_and_evaluate` trains once and evaluates (and exports) from a checkpoint listener:
after each checkpoint save, if `EvalSpec.throttle_secs` have passed since the last
evaluation started, the new checkpoint is evaluated and every exporter runs on it. When
training ends (max_steps, an exhausted input or a hook's stop request) the last checkpoint
is evaluated and exported unless it already was.
"""

from __future__ import annotations

import collections
import logging
import time
from collections.abc import Callable, Iterable
from typing import Any

import keras
import tensorflow as tf

from keras_estimator.export.exporters import Exporter
from keras_estimator.spec.run_config import TaskType
from keras_estimator.training.distributed_training import run_task
from keras_estimator.training.eval_and_export import evaluate_and_export

logger = logging.getLogger("keras_estimator")
_V1 = tf.compat.v1


def _validate_input_fn(input_fn: Any) -> None:
    if not callable(input_fn):
        raise TypeError(
            f"`input_fn` must be callable, given: {input_fn}. Fix: pass the function itself, "
            "e.g. TrainSpec(input_fn=make_dataset), not its result. "
            f"Received: type(input_fn)={type(input_fn).__name__}"
        )


def _validate_hooks(hooks: Any) -> tuple:
    """SessionRunHooks (and, as Estimator.train/evaluate accept them, Keras callbacks)."""
    hooks = tuple(hooks or [])
    for hook in hooks:
        if not isinstance(hook, (_V1.train.SessionRunHook, keras.callbacks.Callback)):
            raise TypeError(
                f"All hooks must be `SessionRunHook` instances, given: {hook}. Fix: pass "
                "tf.compat.v1.train.SessionRunHook objects (or Keras callbacks). "
                f"Received: type(hook)={type(hook).__name__}"
            )
    return hooks


def _validate_saving_listeners(listeners: Any) -> tuple:
    listeners = tuple(listeners or [])
    for listener in listeners:
        if not isinstance(listener, _V1.train.CheckpointSaverListener):
            raise TypeError(
                "All saving_listeners must be `CheckpointSaverListener` instances, "
                f"given: {listener}. Fix: pass tf.compat.v1.train.CheckpointSaverListener "
                f"subclasses. Received: type(listener)={type(listener).__name__}"
            )
    return listeners


def _validate_exporters(exporters: Any) -> tuple:
    if not exporters:
        return ()
    if isinstance(exporters, Exporter):
        exporters = [exporters]
    bad_type = TypeError(
        f"`exporters` must be an Exporter, an iterable of Exporter, or `None`, found {exporters}. "
        "Fix: pass e.g. exporters=[LatestExporter('serving', serving_input_receiver_fn)]. "
        f"Received: type(exporters)={type(exporters).__name__}"
    )
    try:
        exporters = list(exporters)
    except TypeError:
        raise bad_type from None
    names: list = []
    for exporter in exporters:
        if not isinstance(exporter, Exporter):
            raise bad_type
        name = exporter.name
        if not name:
            raise ValueError(
                "An Exporter cannot have a name that is `None` or empty. All exporter names: "
                f"{[e.name for e in exporters]}. Fix: give each exporter a name, e.g. "
                f"LatestExporter('serving', ...). Received: name={name!r}"
            )
        if not isinstance(name, str):
            raise ValueError(
                f"An Exporter must have a string name. Given: {type(name)}. Fix: name it with a "
                f"string such as 'serving'. Received: name={name!r}"
            )
        if name in names:
            raise ValueError(
                "`exporters` must have unique names. Such a name cannot be `None`. All exporter "
                f"names: {[e.name for e in exporters]}. Fix: rename one of them (each exports "
                f"into its own export/<name> directory). Received: name={name!r}, twice"
            )
        names.append(name)
    return tuple(exporters)


class TrainSpec(
    collections.namedtuple("TrainSpec", ["input_fn", "max_steps", "hooks", "saving_listeners"])
):
    """The training half of `train_and_evaluate`: input, duration, hooks, listeners.

    Args:
        input_fn: Returns the training data (a `tf.data.Dataset` of `(features, labels)`
            or a `(features, labels)` tuple), as for `Estimator.train`.
        max_steps: Train until the global step reaches this (> 0); None trains until the
            input is exhausted or a hook requests a stop.
        hooks: `SessionRunHook`s (or Keras callbacks) run during training.
        saving_listeners: `CheckpointSaverListener`s called around each checkpoint save.

    Example:
        >>> train_spec = TrainSpec(train_input_fn, max_steps=1000)
    """

    def __new__(
        cls,
        input_fn: Callable,
        max_steps: int | None = None,
        hooks: Iterable | None = None,
        saving_listeners: Iterable | None = None,
    ) -> TrainSpec:
        _validate_input_fn(input_fn)
        if max_steps is not None and max_steps <= 0:
            raise ValueError(
                f"Must specify max_steps > 0, given: {max_steps}. Fix: pass max_steps=N with "
                f"N >= 1, or None to train until input_fn is exhausted. "
                f"Received: max_steps={max_steps!r}"
            )
        return super().__new__(
            cls,
            input_fn=input_fn,
            max_steps=max_steps,
            hooks=_validate_hooks(hooks),
            saving_listeners=_validate_saving_listeners(saving_listeners),
        )


class EvalSpec(
    collections.namedtuple(
        "EvalSpec",
        ["input_fn", "steps", "name", "hooks", "exporters", "start_delay_secs", "throttle_secs"],
    )
):
    """The evaluation (and export) half of `train_and_evaluate`.

    Args:
        input_fn: Returns the evaluation data, as for `Estimator.evaluate`.
        steps: Batches per evaluation (> 0); None evaluates until the input is exhausted.
        name: Evaluation name; results go to `model_dir/eval_<name>` (`eval` if None).
        hooks: `SessionRunHook`s (or Keras callbacks) run during each evaluation.
        exporters: An `Exporter` or an iterable of them (unique names), run after each
            evaluation.
        start_delay_secs: Seconds a distributed evaluator waits before its first evaluation
            (unused in local mode, as in tf.estimator).
        throttle_secs: Evaluate a new checkpoint only if at least this many seconds passed
            since the last evaluation started.

    Example:
        >>> eval_spec = EvalSpec(eval_input_fn, steps=None, throttle_secs=60,
        ...                      exporters=LatestExporter("latest", serving_input_receiver_fn))
    """

    def __new__(
        cls,
        input_fn: Callable,
        steps: int | None = 100,
        name: str | None = None,
        hooks: Iterable | None = None,
        exporters: Exporter | Iterable[Exporter] | None = None,
        start_delay_secs: float = 120,
        throttle_secs: float = 600,
    ) -> EvalSpec:
        _validate_input_fn(input_fn)
        if steps is not None and steps <= 0:
            raise ValueError(
                f"Must specify steps > 0, given: {steps}. Fix: pass steps=N with N >= 1, or None "
                f"to evaluate until input_fn is exhausted. Received: steps={steps!r}"
            )
        if name is not None and not isinstance(name, str):
            raise TypeError(
                f"`name` must be string, given: {name}. Fix: pass name='validation' (metrics go "
                f"to model_dir/eval_<name>), or None. Received: type(name)={type(name).__name__}"
            )
        hooks = _validate_hooks(hooks)
        exporters = _validate_exporters(exporters)
        if start_delay_secs < 0:
            raise ValueError(
                f"Must specify start_delay_secs >= 0, given: {start_delay_secs}. Fix: pass 0 or "
                f"more seconds. Received: start_delay_secs={start_delay_secs!r}"
            )
        if throttle_secs < 0:
            raise ValueError(
                f"Must specify throttle_secs >= 0, given: {throttle_secs}. Fix: pass 0 or more "
                f"seconds. Received: throttle_secs={throttle_secs!r}"
            )
        return super().__new__(
            cls,
            input_fn=input_fn,
            steps=steps,
            name=name,
            hooks=hooks,
            exporters=exporters,
            start_delay_secs=start_delay_secs,
            throttle_secs=throttle_secs,
        )


def _checkpoint_step(checkpoint: str | None) -> int | None:
    if checkpoint is None:
        return None
    try:
        return int(tf.train.load_variable(checkpoint, "global_step"))
    except (tf.errors.OpError, ValueError):
        return None  # unreadable or without a global step: train() will say so


class _EvaluateOnSave(tf.compat.v1.train.CheckpointSaverListener):
    """Evaluates and exports after checkpoint saves, at most once per `throttle_secs`."""

    def __init__(self, estimator: Any, eval_spec: EvalSpec, max_steps: int | None) -> None:
        self._estimator, self._spec, self._max_steps = estimator, eval_spec, max_steps
        self._previous_checkpoint: str | None = None
        self.eval_result: dict | None = None
        self.export_results: list | None = None

    def begin(self) -> None:
        # The checkpoint saved when training starts holds the state training resumes from;
        # tf.estimator did not evaluate it (its saver saved it on every train() call).
        start = _checkpoint_step(self._estimator.latest_checkpoint())
        self._start_step = 0 if start is None else start
        self._last_step: int | None = None
        self._last_time = 0.0

    def after_save(self, session: Any, global_step_value: int) -> None:
        if self._last_step is None and global_step_value == self._start_step:
            return
        if self._last_step is not None and (
            global_step_value == self._last_step
            or time.time() < self._last_time + self._spec.throttle_secs
        ):
            logger.info(
                "Skip the current checkpoint eval due to throttle secs (%s secs).",
                self._spec.throttle_secs,
            )
            return
        self._evaluate_and_export(global_step_value)

    def end(self, session: Any, global_step_value: int) -> None:
        if global_step_value != self._last_step:
            self._evaluate_and_export(global_step_value)

    def _evaluate_and_export(self, global_step_value: int) -> None:
        self._last_step, self._last_time = global_step_value, time.time()
        estimator = self._estimator
        checkpoint = estimator.latest_checkpoint()
        if checkpoint is None or checkpoint == self._previous_checkpoint:
            status = "missing checkpoint" if checkpoint is None else "no new checkpoint"
            raise RuntimeError(
                f"There was no new checkpoint after the training. Eval status: {status}. "
                "Expected training to save a checkpoint before each evaluation. Fix: check that "
                "model_dir is writable and that no hook stops saving. "
                f"Received: checkpoint={checkpoint!r}"
            )
        metrics, self.export_results = evaluate_and_export(
            estimator, self._spec, self._max_steps, checkpoint
        )
        self.eval_result, self._previous_checkpoint = metrics, checkpoint


def train_and_evaluate(
    estimator: Any, train_spec: TrainSpec, eval_spec: EvalSpec
) -> tuple[dict | None, list | None]:
    """Trains `estimator`, evaluating and exporting after checkpoints, as tf.estimator did.

    Locally (no cluster in TF_CONFIG) it trains and evaluates in this process. Under a
    TF_CONFIG cluster each task does its part, as in tf.estimator: `chief` and `worker`
    tasks train (synchronised by RunConfig's `train_distribute`, e.g.
    MultiWorkerMirroredStrategy), the `evaluator` evaluates and exports each new checkpoint
    until `max_steps` (see `distributed_training.py`); `ps` tasks are not supported. Training saves
    checkpoints at RunConfig's `save_checkpoints_steps` / `save_checkpoints_secs`; after a
    save, the checkpoint is evaluated with `eval_spec` if `eval_spec.throttle_secs` passed
    since the last evaluation, and each exporter in `eval_spec.exporters` runs with
    `export_path=model_dir/export/<exporter.name>`. When training ends, the last
    checkpoint is evaluated and exported unless it already was; `is_the_final_export` is
    True once the global step reached `train_spec.max_steps` (never when it is None).

    Returns:
        `(eval_result, export_results)` of the last evaluation: the metrics dict of
        `Estimator.evaluate` and the list of the exporters' results; `(None, None)` when no
        evaluation ran (training had already reached `max_steps`).

    Raises:
        ValueError: If RunConfig saves no checkpoints (both `save_checkpoints_steps` and
            `save_checkpoints_secs` are None), as tf.estimator raised.

    Example:
        >>> train_spec = TrainSpec(train_input_fn, max_steps=1000)
        >>> eval_spec = EvalSpec(eval_input_fn, steps=None, throttle_secs=0)
        >>> metrics, exports = train_and_evaluate(est, train_spec, eval_spec)
    """
    from keras_estimator.estimator.estimator import Estimator

    if not isinstance(eval_spec, EvalSpec):
        raise TypeError(
            f"`eval_spec` must have type `tf.estimator.EvalSpec`. Got: {type(eval_spec)}. "
            "Fix: pass EvalSpec(input_fn=...). "
            f"Received: type(eval_spec)={type(eval_spec).__name__}"
        )
    if not isinstance(estimator, Estimator):
        raise TypeError(
            f"`estimator` must have type `tf.estimator.Estimator`. Got: {type(estimator)}. "
            "Fix: pass a keras_estimator Estimator (or a canned estimator). "
            f"Received: type(estimator)={type(estimator).__name__}"
        )
    if not isinstance(train_spec, TrainSpec):
        raise TypeError(
            f"`train_spec` must have type `tf.estimator.TrainSpec`. Got: {type(train_spec)}. "
            "Fix: pass TrainSpec(input_fn=..., max_steps=...). "
            f"Received: type(train_spec)={type(train_spec).__name__}"
        )
    config = estimator.config
    if config.cluster_spec or config.task_type == TaskType.EVALUATOR:
        return run_task(estimator, train_spec, eval_spec)
    logger.info("Running training and evaluation locally (non-distributed).")
    logger.info(
        "Start train and evaluate loop. The evaluate will happen after every checkpoint. "
        "Checkpoint frequency is determined based on RunConfig arguments: "
        "save_checkpoints_steps %s or save_checkpoints_secs %s.",
        config.save_checkpoints_steps,
        config.save_checkpoints_secs,
    )
    listener = _EvaluateOnSave(estimator, eval_spec, train_spec.max_steps)
    estimator.train(
        input_fn=train_spec.input_fn,
        max_steps=train_spec.max_steps,
        hooks=list(train_spec.hooks),
        saving_listeners=[*train_spec.saving_listeners, listener],
    )
    return listener.eval_result, listener.export_results
