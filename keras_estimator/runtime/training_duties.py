"""The training loop's duties: what is due between compiled chunks of steps.

tf.estimator's loop was five lines and a list of hooks: the loss log line and the step rate
(`LoggingTensorHook`, `StepCounterHook`), the checkpoint saver (`CheckpointSaverHook`), the
stop at `max_steps` (`StopAtStepHook`) each ran on every step. keras_estimator runs steps
in compiled chunks, so each duty here also says how far the next chunk may run before it is
due (`bound`), and does its work once the chunk returns (`after`, handed the chunk as a
`ChunkDone` record). `runtime/training_loop.py` `run_training` bounds each chunk by every
duty in turn, runs it, and hands it to every duty in turn: the list is `training_duties`.

Who owns what: a duty owns its own cadence (the last step it logged or saved); the loop owns
the global step, the input and the hooks (`hooks/step_watcher.py`).
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable
from typing import Any, Protocol

import tensorflow as tf

from keras_estimator.engine.summaries import write_scalars

logger = logging.getLogger("keras_estimator")

_RATE = "global_step/sec"


@dataclasses.dataclass(frozen=True)
class ChunkDone:
    """What one chunk of steps did.

    Attributes:
        ran: how many steps ran (fewer than asked: the input ended).
        step: the global step after them.
        loss: the loss of the last step that ran (None before any step ran).
        now: `time.time()` when the chunk returned.
    """

    ran: int
    step: int
    loss: float | None
    now: float


class Duty(Protocol):
    """One per-step duty of the training loop."""

    def bound(self, step: int, chunk: int) -> int:
        """The longest next chunk, at most `chunk`, that ends where this duty is due."""
        ...

    def after(self, done: ChunkDone) -> bool:
        """What is due after `done`; True asks training to stop."""
        ...


class TargetStep:
    """The call's last step (`train(steps=N)` / `max_steps`): no chunk runs past it.

    2.15's StopAtStepHook stopped at the first step whose global step reached the target,
    whatever a step added to it (a train op may add more than 1: TF-Ranking's multi-head
    ranking, `tf.group(minimize(loss, step), assign_add(step, 2))`). So the call's first
    chunk is one step, which measures how much a step adds, and the next chunks run the
    steps that reach the target at that rate.
    """

    def __init__(self, target: int, step: int) -> None:
        self.target = target
        self._step = step
        self._per_step: int | None = None  # what a step adds, once a step ran

    def bound(self, step: int, chunk: int) -> int:
        left = max(self.target - step, 0)
        if self._per_step is None:
            return min(chunk, left, 1)
        return min(chunk, -(-left // self._per_step))  # the steps that reach the target

    def after(self, done: ChunkDone) -> bool:
        if done.ran:
            advanced = done.step - self._step
            # A step that keeps the global step (k-means choosing centers) counts as 1.
            self._per_step = max(1, advanced // done.ran) if advanced > 0 else 1
        self._step = done.step
        return False

    def reached(self, step: int) -> bool:
        return step >= self.target


class LossLog:
    """`loss = ..., step = N` every `every` steps, and the step rate
    (`global_step/sec`, logged and written to model_dir), as 2.15's logging and
    step-counter hooks."""

    def __init__(self, every: int, writer: tf.summary.SummaryWriter, step: int, now: float):
        self.every, self._writer = every, writer
        self._last_step, self._last_time = step, now

    def bound(self, step: int, chunk: int) -> int:
        # End right after the step that *starts* at a multiple of `every`: its loss is
        # what tf.estimator logged as "loss = ..., step = <multiple>".
        return min(chunk, (1 - step) % self.every or self.every)

    def after(self, done: ChunkDone) -> bool:
        if not done.ran or (done.step - 1) % self.every:
            return False
        logger.info("loss = %s, step = %d", done.loss, done.step - 1)
        if done.step - self._last_step >= self.every and done.now > self._last_time:
            rate = (done.step - self._last_step) / (done.now - self._last_time)
            logger.info("global_step/sec: %g", rate)
            write_scalars(self._writer, {_RATE: rate}, done.step)
            self._last_time, self._last_step = done.now, done.step
        return False


class Checkpoints:
    """Saves every `saver.save_steps` steps or `saver.save_secs` seconds (2.15's timer: the
    next save counts from the last), and at the end of the call when anything changed."""

    def __init__(self, saver: Any, step: int, now: float) -> None:
        self._saver = saver
        self._last_saved, self._last_time = step, now
        # Steps ran since the last save (k-means' first steps keep the global step).
        self._ran_unsaved = False

    def bound(self, step: int, chunk: int) -> int:
        save_steps = self._saver.save_steps
        if not save_steps:
            return chunk
        return min(chunk, max(self._last_saved + save_steps - step, 1))

    def after(self, done: ChunkDone) -> bool:
        self._ran_unsaved = self._ran_unsaved or done.ran > 0
        save_steps, save_secs = self._saver.save_steps, self._saver.save_secs
        due = (save_steps and done.step - self._last_saved >= save_steps) or (
            save_secs and done.now - self._last_time >= save_secs
        )
        if not due or done.step == self._last_saved:
            return False
        stop = self._saver.save(done.step)
        self._last_saved, self._last_time, self._ran_unsaved = done.step, time.time(), False
        return stop

    def save_final(self, step: int) -> None:
        """The call's last checkpoint, unless its last save already holds it. Steps that
        left the global step as it was changed variables all the same: 2.15 saved them."""
        if step != self._last_saved or self._ran_unsaved:
            self._saver.save(step)
            self._last_saved, self._ran_unsaved = step, False


class InputLength:
    """A finite input of known length: hooks are walked ahead through a chunk, so it must
    not outrun the input (they see as many steps as ran and, at the end, the one
    before_run more 2.15 called before the input's OutOfRangeError). Applied last."""

    def __init__(self, batches: int) -> None:
        self.remaining = batches

    def bound(self, step: int, chunk: int) -> int:
        return max(min(chunk, self.remaining), 1)

    def after(self, done: ChunkDone) -> bool:
        self.remaining = max(self.remaining - done.ran, 0)
        return False


class Progress:
    """The progress bar and the Estimator's per-chunk loss callback (`on_loss`)."""

    def __init__(self, progress: Any, on_loss: Callable[[int, float], None] | None) -> None:
        self._progress, self._on_loss = progress, on_loss

    def bound(self, step: int, chunk: int) -> int:
        return chunk

    def after(self, done: ChunkDone) -> bool:
        if done.ran and done.loss is not None:
            self._progress.update(done.step, done.loss)
            if self._on_loss is not None:
                self._on_loss(done.step, done.loss)
        return False


@dataclasses.dataclass(frozen=True)
class TrainingDuties:
    """The call's duties in the order they bound a chunk and run after it, with the two
    the loop asks by name (the target, and the checkpoints for the final save)."""

    duties: tuple[Duty, ...]
    target: TargetStep | None
    checkpoints: Checkpoints | None

    def bound(self, step: int, chunk: int) -> int:
        for duty in self.duties:
            chunk = duty.bound(step, chunk)
        return chunk

    def after(self, done: ChunkDone) -> bool:
        stop = False
        for duty in self.duties:
            stop = duty.after(done) or stop
        return stop


def training_duties(
    step: int,
    target: int | None,
    log_every: int | None,
    saver: Any,
    summary_writer: tf.summary.SummaryWriter,
    progress: Any,
    on_loss: Callable[[int, float], None] | None,
    input_batches: int | None,
) -> TrainingDuties:
    """The duties of one train() call, in order: progress, the log line, the checkpoints
    (each after a chunk, as 2.15's hooks after a step), then the target and the input's
    length, which only bound the chunks."""
    now = time.time()
    target_duty = TargetStep(target, step) if target is not None else None
    checkpoints = Checkpoints(saver, step, now) if saver is not None else None
    duties: list[Duty] = [Progress(progress, on_loss)]
    if log_every:
        duties.append(LossLog(log_every, summary_writer, step, now))
    if checkpoints is not None:
        duties.append(checkpoints)
    if target_duty is not None:
        duties.append(target_duty)
    if input_batches is not None:
        duties.append(InputLength(input_batches))
    return TrainingDuties(tuple(duties), target_duty, checkpoints)
