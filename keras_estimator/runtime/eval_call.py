"""EvalCall: one `evaluate()` call, from its input to the metrics written for TensorBoard."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import numpy as np
import tensorflow as tf

from keras_estimator.engine.loops import Loop, PredictStep
from keras_estimator.engine.output_keys import HOOKS_KEY
from keras_estimator.engine.summaries import write_scalars
from keras_estimator.hooks.step_watcher import StepWatcher, hook_values, scalar_logs
from keras_estimator.runtime.history import TrainingHistory
from keras_estimator.runtime.input_pipeline import CallInput
from keras_estimator.runtime.model_runtime import ModelRuntime
from keras_estimator.spec.mode_keys import ModeKeys

logger = logging.getLogger("keras_estimator")

_UNTIL_EXHAUSTED = np.iinfo(np.int64).max


def _cardinality(dataset: Any) -> int:
    cardinality = dataset.cardinality  # a distributed dataset's is a property
    return int(cardinality() if callable(cardinality) else cardinality)


class EvalCall:
    """Runs one evaluate() call of an Estimator.

    Args:
        runtime: the Estimator's model, traces and writers.
        input_for: `input_for(input_fn, mode, repeat_tensors)`, the Estimator's input.
        history: where the call records its results.
    """

    def __init__(self, runtime: ModelRuntime, input_for: Callable, history: TrainingHistory):
        self._runtime, self._input_for, self._history = runtime, input_for, history

    def run(
        self,
        input_fn: Callable,
        steps: int | None,
        hooks: list,
        callbacks: list,
        checkpoint: str | None,
        eval_dir: str,
        name: str | None,
        in_memory: bool = False,
        follow_latest: bool = True,
    ) -> dict[str, Any]:
        """Evaluates `checkpoint` (or, `in_memory`, the variables as they are now)."""
        runtime = self._runtime
        if not in_memory:
            runtime.seed()
        # Constant tensors ran `steps` times under tf.estimator (one batch without steps:
        # tf.estimator would have evaluated them forever).
        dataset = self._input_for(input_fn, ModeKeys.EVAL, repeat_tensors=steps is not None)
        if steps is None and _cardinality(dataset) == tf.data.INFINITE_CARDINALITY:
            raise ValueError(  # tf.estimator 2.15 evaluated such input forever
                "evaluate() was given endless input (the dataset repeats forever) and no "
                "`steps`, so it would never finish. Expected a dataset that ends, or a "
                "number of batches. Fix: remove `.repeat()` (or use num_epochs=1 in "
                "numpy_input_fn / pandas_input_fn) for evaluation, or pass steps=N. "
                "Received: steps=None, input cardinality=infinite."
            )
        loop, runner = runtime.prepare(
            ModeKeys.EVAL, dataset, checkpoint, tuple(hooks), keep_variables=in_memory,
            follow_latest=follow_latest,
        )  # fmt: skip
        assert not isinstance(loop, PredictStep)  # EVAL's loop
        model = runtime.prepared_model(ModeKeys.EVAL)  # its own under its own eval_distribute
        model.store.reset_locals()
        limit = steps if steps is not None else _UNTIL_EXHAUSTED
        watcher = StepWatcher(runner, callbacks, model, "test", steps)
        watcher.begin()
        with CallInput(dataset) as inputs:
            ran, logs = self._run(loop, inputs, limit, watcher)
        watcher.end(scalar_logs(logs))
        runtime.flush_model_fn_writers(ModeKeys.EVAL)
        if ran == 0:
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
        metrics = {k: v for k, v in results.items() if k != "global_step"}
        write_scalars(runtime.summary_writer(eval_dir), metrics, results["global_step"])
        self._history.record_evaluation(name, results["global_step"], results)
        return results

    @staticmethod
    def _run(loop: Loop, inputs: CallInput, limit: int, watcher: StepWatcher) -> tuple[int, dict]:
        """Runs up to `limit` batches: in one compiled loop, or watched one by one."""
        if not watcher.active:
            ran, logs = loop(inputs.iterator, tf.constant(limit, tf.int64))
            return int(ran), logs

        def run_step(fetches: dict) -> tuple[bool, dict, dict]:
            step_loop = loop.with_fetches(fetches) if fetches else loop
            ran, logs = step_loop(inputs.iterator, tf.constant(1, tf.int64))
            return bool(int(ran)), logs, hook_values(logs)

        done, logs = 0, None
        while done < limit:
            outputs, stop = watcher.step(done, run_step, scalar_logs)
            if outputs is None:
                break
            done, logs = done + 1, outputs
            if stop:
                break
        if logs is None:  # no batch: the metrics' initial values
            _, logs = loop(inputs.iterator, tf.constant(0, tf.int64))
        return done, logs
