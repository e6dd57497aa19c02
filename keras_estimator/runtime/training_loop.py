"""The training loop around the compiled steps: chunks, logging, checkpoints, hooks."""

from __future__ import annotations

import dataclasses
import logging
import os
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import tensorflow as tf

from keras_estimator.checkpoint import checkpoint_files as ckpt_lib
from keras_estimator.checkpoint.graph_files import StepGraph
from keras_estimator.distribute import cluster_barrier, step_agreement
from keras_estimator.engine.loops import Loop
from keras_estimator.hooks.runner import HookRunner
from keras_estimator.hooks.step_watcher import StepWatcher, hook_values
from keras_estimator.runtime.input_pipeline import CallInput
from keras_estimator.runtime.progress import TrainingProgress
from keras_estimator.runtime.training_duties import ChunkDone, training_duties
from keras_estimator.seam import internals

logger = logging.getLogger("keras_estimator")

# Longest run of steps without a return to Python (time-based saves are checked between).
_MAX_CHUNK = 1000
_MAX_STEP = 2**63 - 1  # the global step is an int64: one step past this wraps to negative


class GlobalStepOverflowError(OverflowError, ValueError):
    """Training would take the int64 global step past 2**63 - 1 (it would wrap negative)."""


def _refuse_step_overflow(step: int, steps: int, what: str) -> None:
    """Raises before the global step would pass the largest int64 and wrap negative."""
    if step + steps <= _MAX_STEP:
        return
    raise GlobalStepOverflowError(
        f"Training would take the global step past the largest int64 ({_MAX_STEP}): it is "
        f"at {step} and {what} {steps} more step(s), after which it would wrap to a negative "
        "number and training would never stop. Expected global_step + steps <= 2**63 - 1. "
        "Fix: pass fewer steps or a max_steps <= 2**63 - 1, or start from a checkpoint with a "
        f"smaller global step (a new model_dir). Received: global_step={step}, steps={steps}"
    )


class ListenedSaver:
    """Checkpoint saving with `CheckpointSaverListener`s around it, as CheckpointSaverHook.

    `save_steps` / `save_secs` are its cadence (one of them is set).
    """

    def __init__(
        self,
        writer: ckpt_lib.CheckpointWriter,
        listeners: list,
        session: Any,
        save_steps: int | None,
        save_secs: float | None,
    ) -> None:
        self._writer, self.listeners, self._session = writer, listeners, session
        self.save_steps, self.save_secs = save_steps, save_secs
        self._graph_pending: StepGraph | None = None  # its graph.pbtxt goes with a save
        self._saved = False  # this call wrote a checkpoint

    @property
    def directory(self) -> str:
        return self._writer.model_dir

    def save(self, step: int) -> bool:
        """Saves (with the `.meta` when write_graph asked for it); True when a listener's
        after_save asked training to stop. The call's first save writes graph.pbtxt."""
        for listener in self.listeners:
            listener.before_save(self._session, step)
        self._writer.save(step)
        self._saved = True
        self._write_pending_graph()
        stop = False
        for listener in self.listeners:
            stop = bool(listener.after_save(self._session, step)) or stop
        return stop

    def write_graph(self, graph: StepGraph, with_meta: bool) -> None:
        """`graph.pbtxt` in the checkpoint directory with this call's first save (a call
        that fails before its first save leaves model_dir as it was) and, `with_meta`, a
        `.meta` with every checkpoint, written with it."""
        self._graph_pending = graph
        self._writer.meta_graph = graph.meta_graph if with_meta else None

    def _write_pending_graph(self) -> None:
        if self._saved and self._graph_pending is not None:
            self._graph_pending.write_graph_pbtxt(self.directory)
            self._graph_pending = None

    def abort(self) -> None:
        """For a call that fails: graph.pbtxt is written when the call saved a checkpoint
        (2.15 wrote it when its session was made); what fails here is logged, not raised."""
        try:
            self._write_pending_graph()
        except Exception as exc:
            logger.error("The graph files of this failed train() call are incomplete: %s", exc)

    def end(self, step: int) -> None:
        self._write_pending_graph()
        for listener in self.listeners:
            listener.end(self._session, step)


def make_saver(
    model_dir: str,
    variables: dict[str, tf.Variable],
    config: Any,
    runner: HookRunner,
    listeners: list,
    scaffold_saver: Any = None,
) -> ListenedSaver | None:
    """The checkpoint saving tf.estimator would have done for this train() call.

    The CheckpointSaverHook among the hooks (user or EstimatorSpec) if there is one, with
    its directory, basename, cadence and listeners; else one from RunConfig's
    save_checkpoints_steps / save_checkpoints_secs; else None. `saving_listeners` join the
    saver's listeners, as in tf.estimator. A Saver given to the hook or the EstimatorSpec's
    Scaffold lends its retention (max_to_keep, keep_checkpoint_every_n_hours).
    """
    if len(runner.saver_hooks) > 1:
        raise NotImplementedError(
            f"{len(runner.saver_hooks)} CheckpointSaverHooks were given; keras_estimator saves "
            "through one. Expected at most one CheckpointSaverHook among hooks, "
            "training_hooks and training_chief_hooks. Fix: merge their listeners into one. "
            f"Received: {len(runner.saver_hooks)} CheckpointSaverHooks"
        )
    keep_max, keep_hours = config.keep_checkpoint_max, config.keep_checkpoint_every_n_hours
    user_saver = scaffold_saver
    if runner.saver_hooks:
        hook = internals.saver_hook_settings(runner.saver_hooks[0])
        directory, basename = os.path.split(hook.save_path)
        save_steps, save_secs = hook.save_steps, hook.save_secs
        listeners = hook.listeners + [x for x in listeners if x not in hook.listeners]
        user_saver = hook.saver or getattr(hook.scaffold, "saver", None) or user_saver
    elif config.save_checkpoints_steps or config.save_checkpoints_secs:
        directory, basename = model_dir, ckpt_lib.CHECKPOINT_BASENAME
        save_steps, save_secs = config.save_checkpoints_steps, config.save_checkpoints_secs
    else:
        if listeners:
            raise ValueError(
                "There should be a CheckpointSaverHook to use saving_listeners. Please set "
                "one of the RunConfig.save_checkpoints_steps or "
                "RunConfig.save_checkpoints_secs. "
                f"Received: saving_listeners={listeners!r}, save_checkpoints_steps="
                f"{config.save_checkpoints_steps!r}, save_checkpoints_secs="
                f"{config.save_checkpoints_secs!r}"
            )
        return None  # tf.estimator added no checkpoint saver when both were None (or 0)
    if isinstance(user_saver, tf.compat.v1.train.Saver):
        # Its var_list is graph-bound (every variable is saved); its retention carries over.
        keep_max, keep_hours = internals.saver_retention(user_saver)
    if not config.is_chief:
        return None  # the saver is a chief-only hook in tf.estimator: workers do not save
    tf.io.gfile.makedirs(directory)
    # A tf.train.Checkpoint (the Scaffold's saver) writes object-based checkpoints, as 2.15.
    object_checkpoint = user_saver if isinstance(user_saver, tf.train.Checkpoint) else None
    writer = ckpt_lib.CheckpointWriter(directory, variables, keep_max, keep_hours, basename,
                                       object_checkpoint=object_checkpoint)  # fmt: skip
    return ListenedSaver(writer, listeners, runner.session, save_steps, save_secs)


class DivergedLossError(tf.compat.v1.train.NanLossDuringTrainingError):
    """The NanLossDuringTrainingError tf.estimator's NanTensorHook raised, naming the step."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else super().__str__()


def _refuse_non_finite(logs: dict) -> None:
    """Raises at a NaN or infinite loss: the loops report a run's first one (engine/loops.py),
    before anything of it is saved."""
    loss = float(logs["loss"])
    if np.isfinite(loss):
        return
    step = int(logs["global_step"]) - 1  # the global step the step started at, as log lines
    logger.error("Model diverged with loss = %s at step %d.", loss, step)  # as 2.15's hook
    raise DivergedLossError(
        f"Model diverged with loss = {loss} at step {step}: NaN loss during training. Nothing "
        "of this step or later was saved. Expected a finite loss at every step. Fix: lower the "
        "learning rate, clip gradients, or check the input data and the loss for NaN or inf; "
        f"train() resumes from the latest checkpoint. Received: loss={loss}, step={step}"
    )


def _batches_left(dataset: Any) -> int | None:
    """How many batches a finite dataset of known length holds (None: infinite or unknown).
    With an unknown length, hooks walked ahead of a chunk the input cuts short have seen
    after_run for steps that did not run (the only place the protocol is approximate)."""
    if not isinstance(dataset, tf.data.Dataset):
        return None
    cardinality = int(dataset.cardinality())
    return cardinality if cardinality >= 0 else None


def run_training(
    loop: Loop,
    inputs: CallInput,
    config: Any,
    saver: ListenedSaver | None,
    watcher: StepWatcher,
    summary_writer: tf.summary.SummaryWriter,
    step: int,
    target: int | None,
    on_loss: Callable[[int, float], None] | None = None,
    interrupt: Any = None,
) -> int:
    """Runs the compiled loop in chunks that end exactly where something is due.

    A chunk ends where the nearest duty is due (`runtime/training_duties.py`: the log line,
    a checkpoint, the target, the input's length) or at a step a hook fetches from; steps
    hooks need nothing from run together; a step a callback or a fetching hook watches
    runs alone. At the end the hooks and callbacks end, and the final checkpoint is written
    even when one of them raises there. Returns the final global step.
    """
    if target is not None:
        _refuse_step_overflow(step, max(target - step, 0), "this train() call asks for")
    progress = TrainingProgress(step, target)
    batches = _batches_left(inputs.dataset) if watcher.runner.active else None
    duties = training_duties(step, target, config.log_step_count_steps, saver, summary_writer,
                             progress, on_loss, batches)  # fmt: skip
    strategy = tf.distribute.get_strategy()
    lockstep = cluster_barrier.spans_several_tasks(strategy)  # multi-worker: same calls
    done = ChunkDone(0, step, None, time.time())
    stop = False
    while True:
        ending = stop or (interrupt is not None and interrupt.requested)
        ending = ending or (duties.target is not None and duties.target.reached(done.step))
        if ending and not lockstep:
            break
        chunk = duties.bound(done.step, config.steps_per_execution or _MAX_CHUNK)
        # Without a target (training until the input ends) the next chunk must fit too.
        _refuse_step_overflow(done.step, chunk, "the next run of steps takes")
        if lockstep:
            chunk = _agreed_chunk(strategy, watcher, chunk, ending, done.step)
            if not chunk:
                break
        asked, done, stop = _run_chunk(loop, inputs, watcher, chunk, done, target, step)
        stop = duties.after(done) or stop
        if done.ran < asked:
            break  # input exhausted
    inputs.release()  # deleted while the call ends (see CallInput)
    progress.close(done.step, done.loss)
    try:
        watcher.end({"loss": done.loss} if done.loss is not None else {})
    finally:
        # A hook or callback raising in its end() must not cost the call's training.
        if duties.checkpoints is not None:
            duties.checkpoints.save_final(done.step)
    # Multi-worker: return on every task only once the chief's final checkpoint is saved
    # (every task ended at this step, a stop on one task included: the vote above).
    cluster_barrier.wait_for_every_task(strategy, done.step)
    logger.info("Loss for final step: %s.", done.loss)
    return done.step


def _agreed_chunk(strategy: Any, watcher: StepWatcher, chunk: int, ending: bool,
                  step: int) -> int:  # fmt: skip
    """Multi-worker: every task runs as many steps per call, the smallest run any task
    wants (the chief's end at its checkpoints; hooks or callbacks want one step). A task
    that ends (its hook, listener or callback asked to stop, a signal, its target) votes
    to stop: every task stops at this same step, none is left waiting in the next vote or
    in the end-of-training barrier. 0: stop."""
    wanted = 1 if watcher.active else chunk
    agreed = step_agreement.agreed_steps(strategy, wanted, stop=ending)
    if not agreed and not ending:
        logger.info("Another task of the cluster stopped training at step %d; this task "
                    "stops there too.", step)  # fmt: skip
    return agreed


def _run_chunk(loop: Loop, inputs: CallInput, watcher: StepWatcher, chunk: int,
               before: ChunkDone, target: int | None,
               started: int) -> tuple[int, ChunkDone, bool]:  # fmt: skip
    """Runs up to `chunk` steps: alone when a hook or callback watches the step, else as
    one compiled run while the hooks are walked ahead. Returns (the steps asked for, what
    ran, whether a hook or callback asked to stop)."""
    watched = watcher.active
    if watched and chunk > 1:
        quiet = watcher.quiet_steps(chunk)  # hooks walked ahead; no callback watches
        if quiet:
            chunk, watched = quiet, False
    chunk = 1 if watched else chunk
    # These steps are all the call runs (train(steps=1), say): see ChunkedLoop.
    whole_call = target is not None and before.step == started and target - before.step == chunk
    if watched:
        logs, stop = watcher.step(before.step, _single_step(loop, inputs, whole_call),
                                  lambda logs: {"loss": float(logs["loss"])})  # fmt: skip
        ran = 0 if logs is None else 1
    else:
        ran, logs = loop(inputs.iterator, tf.constant(chunk, tf.int64), endless=inputs.endless,
                         whole_call=whole_call)  # fmt: skip
        ran = int(ran)
        if ran:
            _refuse_non_finite(logs)
        stop = watcher.runner.stop_requested if ran and watcher.runner.active else False
    if not ran:
        return chunk, dataclasses.replace(before, ran=0, now=time.time()), stop
    done = ChunkDone(ran, int(logs["global_step"]), float(logs["loss"]), time.time())
    return chunk, done, stop


def _single_step(loop: Loop, inputs: CallInput, whole_call: bool) -> Callable:
    """`run(fetches)` for the step watcher: one step with the hooks' fetches."""

    def run_step(fetches: dict) -> tuple[bool, dict, dict]:
        step_loop = loop.with_fetches(fetches) if fetches else loop
        # The call's `endless` for every step: one instance of a stateful step.
        ran, logs = step_loop(
            inputs.iterator, tf.constant(1, tf.int64), endless=inputs.endless,
            whole_call=whole_call,
        )  # fmt: skip
        if int(ran):
            _refuse_non_finite(logs)  # before any after_run, as 2.15
        return bool(int(ran)), logs, hook_values(logs)

    return run_step
