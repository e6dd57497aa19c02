"""TrainCall: one `train()` call, from its input to the last `end()` and the final save."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterator
from typing import Any

import tensorflow as tf

from keras_estimator.checkpoint import checkpoint_files as ckpt_lib
from keras_estimator.engine.loops import Loop, PredictStep
from keras_estimator.hooks.step_watcher import StepWatcher
from keras_estimator.runtime.history import TrainingHistory
from keras_estimator.runtime.input_pipeline import CallInput
from keras_estimator.runtime.interrupts import GracefulInterrupt
from keras_estimator.runtime.model_runtime import ModelRuntime
from keras_estimator.runtime.training_loop import make_saver, run_training
from keras_estimator.spec.mode_keys import ModeKeys
from keras_estimator.utils.log import notice

logger = logging.getLogger("keras_estimator")


class TrainCall:
    """Runs one train() call of an Estimator.

    Args:
        runtime: the Estimator's model, traces and writers.
        input_for: `input_for(input_fn, mode)`, the Estimator's input (distributed).
        history: where the call records its losses.
    """

    def __init__(self, runtime: ModelRuntime, input_for: Callable, history: TrainingHistory):
        self._runtime, self._input_for, self._history = runtime, input_for, history
        self._config = runtime.config

    def run(
        self,
        input_fn: Callable,
        hooks: list,
        callbacks: list,
        listeners: list,
        steps: int | None,
        max_steps: int | None,
    ) -> None:
        """Trains `steps` more steps or up to `max_steps` (already validated)."""
        runtime, config = self._runtime, self._config
        checkpoint = runtime.latest_checkpoint()
        if max_steps is not None and checkpoint is not None:
            done = int(tf.train.load_variable(checkpoint, "global_step"))
            if done >= max_steps:
                notice(
                    logger,
                    "Skipping training since max_steps has already saved: the checkpoint in "
                    "%s is at step %d >= max_steps=%d. Pass a larger max_steps (or steps=N) "
                    "to train on, or a new model_dir to start over.",
                    runtime.model_dir, done, max_steps,
                )  # fmt: skip
                return
        runtime.seed()
        dataset = self._input_for(input_fn, ModeKeys.TRAIN)
        # A call that fails before its first step leaves model_dir as it was.
        with runtime.summaries_for(ModeKeys.TRAIN) as writer:
            loop, runner = runtime.prepare(
                ModeKeys.TRAIN, dataset, checkpoint, tuple(hooks), writer
            )
            assert not isinstance(loop, PredictStep)  # TRAIN's loop
            model = runtime.prepared_model()
            saver = make_saver(
                runtime.model_dir, model.store.global_variables(), config, runner, listeners,
                runtime.call_model_fn.train_scaffold_saver,
            )  # fmt: skip
            step = runtime.global_step_value()
            runtime.training_starts_at(step)  # from here, model_dir keeps the event file
            target = max_steps if max_steps is not None else step + steps if steps else None
            try:
                step, interrupt = self._train(
                    loop, runner, saver, writer, dataset, callbacks, step, target
                )
            except BaseException:
                if saver is not None:
                    saver.abort()
                raise
        if interrupt.requested:
            saved = f"; the checkpoint for step {step} is in {saver.directory}" if saver else ""
            raise interrupt.stop_error(step, saved)

    def _train(
        self,
        loop: Loop,
        runner: Any,
        saver: Any,
        writer: Any,
        dataset: Any,
        callbacks: list,
        step: int,
        target: int | None,
    ) -> tuple[int, GracefulInterrupt]:
        """From the call's graph files and first save to its last `end()`; returns the last
        step and the call's GracefulInterrupt."""
        runtime, config = self._runtime, self._config
        model = runtime.prepared_model()
        if saver is not None:
            self._write_graph_files(saver, writer)
        model.train_call_start.assign(step)
        for listener in saver.listeners if saver is not None else []:
            listener.begin()
        if saver is not None and ckpt_lib.latest_checkpoint(saver.directory) is None:
            saver.save(step)  # 2.15 saved step 0's checkpoint before the first step
        watcher = StepWatcher(runner, callbacks, model, "train",
                              None if target is None else target - step)  # fmt: skip
        watcher.begin()
        with (
            runtime.scope(ModeKeys.TRAIN),  # traced in it: called elsewhere, it would retrace
            self._peer_failures_explained(),
            GracefulInterrupt(sigterm=config.save_on_sigterm) as interrupt,
            CallInput(dataset) as inputs,
        ):
            step = run_training(
                loop, inputs, config, saver, watcher,
                runtime.summary_writer(runtime.model_dir) if config.is_chief else None,
                step, target, on_loss=self._history.record_loss, interrupt=interrupt,
            )  # fmt: skip
        if config.is_chief:
            runtime.summary_writer(runtime.model_dir).flush()
        runtime.flush_model_fn_writers()
        if saver is not None:
            saver.end(step)
        return step, interrupt

    def _write_graph_files(self, saver: Any, writer: Any) -> None:
        """model_dir's graph files as 2.15 wrote them when train() began: graph.pbtxt, the
        graph in the event file (TensorBoard's graph tab), `.meta` files with each
        checkpoint when RunConfig.checkpoint_save_graph_def (2.15's default). The graph is
        built here, before the first save (once per distinct trace: see
        ModelRuntime.step_graph)."""
        graph = self._runtime.step_graph(ModeKeys.TRAIN)
        saver.write_graph(graph, self._config.checkpoint_save_graph_def)
        if writer is not None:
            with writer.as_default():
                tf.summary.graph(graph.graph_def)

    @contextlib.contextmanager
    def _peer_failures_explained(self) -> Iterator[None]:
        """A task of a multi-worker job that died shows up as a collective op failing."""
        try:
            yield
        except (tf.errors.UnavailableError, tf.errors.AbortedError) as exc:
            runtime = self._runtime
            if runtime.strategy_for(ModeKeys.TRAIN) is None:
                raise
            checkpoint = runtime.latest_checkpoint() if self._config.is_chief else None
            raise type(exc)(
                exc.node_def,
                exc.op,
                "Another task of the distributed training job stopped responding, so this "
                f"one cannot continue ({exc.message.splitlines()[0]}). "
                + (f"The last checkpoint, {checkpoint}, is intact. " if checkpoint else "")
                + "Fix: restart every task of the job; training resumes from the latest "
                "checkpoint in model_dir.",
            ) from exc
