"""The training loop's duties as units (runtime/training_duties.py): how far each lets the
next chunk run, and what each does after it, on real summary files and real checkpoints."""

import logging

import tensorflow as tf

from keras_estimator.checkpoint import checkpoint_files as ckpt_lib
from keras_estimator.runtime.event_files import read_scalars
from keras_estimator.runtime.training_duties import (
    Checkpoints,
    ChunkDone,
    InputLength,
    LossLog,
    TargetStep,
    training_duties,
)
from keras_estimator.runtime.training_loop import ListenedSaver


class Recorder(tf.compat.v1.train.CheckpointSaverListener):
    def __init__(self):
        self.saved = []

    def after_save(self, session, global_step_value):
        self.saved.append(global_step_value)


def _saver(tmp_path, save_steps=None, save_secs=None):
    variables = {"w": tf.Variable([1.0, 2.0], name="w")}
    writer = ckpt_lib.CheckpointWriter(str(tmp_path), variables, 5, None)
    listener = Recorder()
    return ListenedSaver(writer, [listener], None, save_steps, save_secs), listener


def test_the_log_line_bounds_chunks_to_its_steps_and_logs_their_loss(tmp_path, caplog):
    writer = tf.summary.create_file_writer(str(tmp_path))
    log = LossLog(100, writer, step=0, now=0.0)
    # A chunk ends right after the step that starts at a multiple of 100 (2.15's line).
    assert log.bound(0, 1000) == 1 and log.bound(1, 1000) == 100 and log.bound(60, 1000) == 41
    assert log.bound(60, 10) == 10
    with caplog.at_level(logging.INFO, logger="keras_estimator"):
        log.after(ChunkDone(ran=1, step=1, loss=2.5, now=1.0))
        log.after(ChunkDone(ran=50, step=51, loss=1.0, now=2.0))  # not due: nothing
        log.after(ChunkDone(ran=50, step=101, loss=0.5, now=3.0))
    lines = [r.getMessage() for r in caplog.records]
    # The rate over the steps since the call's start (101 steps in 3 s), once 100 ran.
    assert lines == ["loss = 2.5, step = 0", "loss = 0.5, step = 100", "global_step/sec: 33.6667"]
    writer.flush()
    assert abs(read_scalars(str(tmp_path))[101]["global_step/sec"] - 101 / 3) < 1e-4


def test_checkpoints_save_on_their_cadence_and_once_more_at_the_end(tmp_path):
    saver, listener = _saver(tmp_path, save_steps=3)
    checkpoints = Checkpoints(saver, step=0, now=0.0)
    assert checkpoints.bound(0, 1000) == 3 and checkpoints.bound(2, 1000) == 1
    for step in (1, 2, 3, 4):
        checkpoints.after(ChunkDone(ran=1, step=step, loss=1.0, now=float(step)))
    assert listener.saved == [3]
    assert checkpoints.bound(4, 1000) == 2  # the next save counts from the last one
    checkpoints.save_final(4)
    checkpoints.save_final(4)  # already saved: nothing more
    assert listener.saved == [3, 4]
    assert tf.train.latest_checkpoint(str(tmp_path)).endswith("model.ckpt-4")


def test_steps_that_keep_the_global_step_are_saved_at_the_end(tmp_path):
    saver, listener = _saver(tmp_path, save_secs=600)
    checkpoints = Checkpoints(saver, step=0, now=0.0)
    checkpoints.after(ChunkDone(ran=2, step=0, loss=1.0, now=1.0))  # k-means' first steps
    checkpoints.save_final(0)
    assert listener.saved == [0]


def test_the_target_and_the_input_length_bound_the_chunk():
    target = TargetStep(10, step=0)
    assert target.bound(0, 1000) == 1  # the first step measures what a step adds
    target.after(ChunkDone(ran=1, step=1, loss=1.0, now=0.0))
    assert target.bound(7, 1000) == 3 and target.bound(10, 1000) == 0 and target.reached(10)
    length = InputLength(4)
    assert length.bound(0, 1000) == 4
    length.after(ChunkDone(ran=4, step=4, loss=1.0, now=0.0))
    assert length.bound(4, 1000) == 1  # the before_run 2.15 called before the input's end


def test_the_duties_bound_and_run_in_their_order(tmp_path):
    class Bar:
        def __init__(self):
            self.updates = []

        def update(self, step, loss):
            self.updates.append((step, loss))

    saver, listener = _saver(tmp_path, save_steps=5)
    bar, losses = Bar(), []
    duties = training_duties(0, 12, 4, saver, None, bar, lambda step, loss: losses.append(step), 7)
    kinds = [type(d).__name__ for d in duties.duties]
    assert kinds == ["Progress", "LossLog", "Checkpoints", "TargetStep", "InputLength"]
    assert duties.bound(0, 1000) == 1  # the log line's step 0 (and the target's first step)
    duties.after(ChunkDone(ran=1, step=1, loss=0.9, now=0.5))
    assert duties.bound(1, 1000) == 4  # the log line at step 4 comes before the save at 5
    assert duties.bound(4, 1000) == 1  # the save at 5
    duties.after(ChunkDone(ran=4, step=5, loss=0.5, now=1.0))
    assert bar.updates == [(1, 0.9), (5, 0.5)] and losses == [1, 5] and listener.saved == [5]
    assert duties.bound(9, 1000) == 1  # the input's length (7) is past: one more step


def test_the_target_counts_what_a_step_adds_to_the_global_step():
    """A train op adding 3 to the global step: 2.15's StopAtStepHook stopped at the first
    step reaching the target (max_steps=60: 20 steps, global step 60)."""
    target = TargetStep(60, step=0)
    assert target.bound(0, 1000) == 1
    target.after(ChunkDone(ran=1, step=3, loss=1.0, now=0.0))
    assert target.bound(3, 1000) == 19  # 19 more steps of 3 reach 60
    target.after(ChunkDone(ran=19, step=60, loss=1.0, now=0.0))
    assert target.reached(60) and target.bound(60, 1000) == 0
    keeps = TargetStep(5, step=0)  # k-means' first steps keep the global step: counted as 1
    keeps.after(ChunkDone(ran=2, step=0, loss=1.0, now=0.0))
    assert keeps.bound(0, 1000) == 5
