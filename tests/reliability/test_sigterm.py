"""SIGTERM (a preemption) during train(): training stops after the current run of steps,
writes a complete checkpoint, releases model_dir's lock and exits with status 143; a rerun
resumes from that checkpoint. A second SIGTERM stops at once; RunConfig(save_on_sigterm=
False) keeps SIGTERM's default (real child processes, and signals sent to this process)."""

import logging
import os
import signal
import threading
import time

import numpy as np
import pytest
import tensorflow as tf
from helpers import SCRIPTS, catches_signal, dataset_input_fn, make_estimator, start_python

import keras_estimator as estimator
from keras_estimator.checkpoint.model_dir_lock import LOCK_NAME
from keras_estimator.runtime.interrupts import TrainingTerminated

SCRIPT = os.path.join(SCRIPTS, "interrupt_train.py")
VARIABLES = {"global_step", "dense/kernel", "dense/bias", "dense_1/kernel", "dense_1/bias"}


class Child:
    """interrupt_train.py in a child process; its output lines collected by a thread."""

    def __init__(self, model_dir, *flags):
        self.model_dir = model_dir
        self.proc = start_python(SCRIPT, model_dir, *flags)
        self.lines = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.append(line)

    def wait_for(self, found, what, timeout=120):
        deadline = time.time() + timeout
        while not found():
            assert time.time() < deadline, f"never saw {what}: {''.join(self.lines)[-3000:]}"
            assert self.proc.poll() is None, f"exited early: {''.join(self.lines)[-3000:]}"
            time.sleep(0.1)

    def wait_for_training(self, handler=True):
        """Until the step-0 checkpoint exists and (`handler`) train()'s SIGTERM handler is
        installed, then a little training. The checkpoint alone is not enough: the handler
        comes ~50 ms after it, and a SIGTERM before it kills the process outright."""
        self.wait_for(lambda: tf.train.latest_checkpoint(self.model_dir), "a checkpoint")
        if handler:
            self.wait_for(
                lambda: catches_signal(self.proc.pid, signal.SIGTERM), "train()'s SIGTERM handler"
            )
        time.sleep(1.5)

    def finish(self, timeout=60):
        try:
            self.proc.wait(timeout=timeout)
        finally:
            self.proc.kill()
            self.proc.wait()
            self._reader.join(timeout=10)
        return "".join(self.lines)


def _complete_checkpoint_step(model_dir):
    """The latest checkpoint's step, after reading back every variable of it."""
    latest = tf.train.latest_checkpoint(model_dir)
    reader = tf.train.load_checkpoint(latest)
    names = set(reader.get_variable_to_shape_map())
    assert VARIABLES <= names, sorted(names)
    for name in names:
        assert np.all(np.isfinite(reader.get_tensor(name))), name
    step = int(reader.get_tensor("global_step"))
    assert latest.endswith(f"model.ckpt-{step}")
    return step


def test_sigterm_saves_the_reached_step_exits_143_and_a_rerun_resumes(tmp_path, toy_data):
    model_dir = str(tmp_path / "model")
    child = Child(model_dir)
    try:
        child.wait_for_training()
        child.proc.send_signal(signal.SIGTERM)
    finally:
        output = child.finish()
    assert child.proc.returncode == 143, output[-3000:]
    assert "SIGTERM received: training stops after the current step" in output
    message = output.split("Training stopped by SIGTERM after step ")[1]
    step = int(message.split(";")[0])
    assert step > 0 and "Run train() again to continue" in message
    assert _complete_checkpoint_step(model_dir) == step  # the reached step, complete
    assert not os.path.exists(os.path.join(model_dir, LOCK_NAME))  # the lock was released

    x, y = toy_data
    est = make_estimator(model_dir)
    est.train(dataset_input_fn(x, y, 16, repeat=True), steps=5)
    assert est.get_variable_value("global_step") == step + 5


def test_a_second_sigterm_stops_at_once_and_the_next_run_takes_the_lock_over(
    tmp_path, toy_data, caplog
):
    model_dir = str(tmp_path / "model")
    child = Child(model_dir, "--slow-final-save")  # the final save sleeps 60 s first
    try:
        child.wait_for_training()
        child.proc.send_signal(signal.SIGTERM)
        child.wait_for(lambda: any(line.startswith("SAVING") for line in child.lines), "SAVING")
        started = time.time()
        child.proc.send_signal(signal.SIGTERM)
    finally:
        output = child.finish(timeout=30)
    assert child.proc.returncode == -signal.SIGTERM, output[-3000:]
    assert time.time() - started < 30
    assert tf.train.latest_checkpoint(model_dir).endswith("model.ckpt-0")  # no final save
    assert os.path.exists(os.path.join(model_dir, LOCK_NAME))  # killed while holding it

    x, y = toy_data
    est = make_estimator(model_dir)
    with caplog.at_level(logging.WARNING, logger="keras_estimator"):
        est.train(dataset_input_fn(x, y, 16, repeat=True), steps=3)
    assert f"process {child.proc.pid} is no longer running" in caplog.text
    assert est.get_variable_value("global_step") == 3
    assert not os.path.exists(os.path.join(model_dir, LOCK_NAME))


def test_save_on_sigterm_false_keeps_sigterms_default(tmp_path):
    model_dir = str(tmp_path / "model")
    child = Child(model_dir, "--no-sigterm-save")
    try:
        child.wait_for_training(handler=False)  # it installs none for SIGTERM
        child.proc.send_signal(signal.SIGTERM)
    finally:
        output = child.finish()
    assert child.proc.returncode == -signal.SIGTERM, output[-3000:]
    assert "SIGTERM received" not in output
    assert tf.train.latest_checkpoint(model_dir).endswith("model.ckpt-0")


class _SignalAtStep(tf.compat.v1.train.SessionRunHook):
    """Sends `signum` to this process after the `at`-th step."""

    def __init__(self, signum, at):
        self.signum, self.at, self.calls = signum, at, 0

    def after_run(self, run_context, run_values):
        self.calls += 1
        if self.calls == self.at:
            os.kill(os.getpid(), self.signum)


def test_sigterm_in_this_process_raises_system_exit_143_and_restores_the_handler(
    tmp_path, toy_data
):
    x, y = toy_data
    received = []
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: received.append(signum))
    try:
        est = make_estimator(tmp_path, save_checkpoints_steps=1000, steps_per_execution=1)
        with pytest.raises(TrainingTerminated) as info:
            est.train(dataset_input_fn(x, y, 16, repeat=True), steps=100,
                      hooks=[_SignalAtStep(signal.SIGTERM, 3)])  # fmt: skip
        assert isinstance(info.value, SystemExit) and info.value.code == 143
        assert "Training stopped by SIGTERM after step 3;" in str(info.value)
        assert _complete_checkpoint_step(str(tmp_path)) == 3
        assert received == []  # train()'s handler took it, not the previous one
        # After train() the previous handler is back.
        os.kill(os.getpid(), signal.SIGTERM)
        deadline = time.time() + 10
        while not received and time.time() < deadline:
            time.sleep(0.01)
        assert received == [signal.SIGTERM]
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_training_in_another_thread_installs_no_handler(tmp_path, toy_data):
    x, y = toy_data
    seen = []

    class Look(tf.compat.v1.train.SessionRunHook):
        def after_run(self, run_context, run_values):
            seen.append(signal.getsignal(signal.SIGTERM))

    before = signal.getsignal(signal.SIGTERM)
    est = make_estimator(tmp_path)
    thread = threading.Thread(
        target=lambda: est.train(dataset_input_fn(x, y, 16, repeat=True), steps=2, hooks=[Look()])
    )
    thread.start()
    thread.join()
    assert seen and all(handler == before for handler in seen)
    assert est.get_variable_value("global_step") == 2


def test_save_on_sigterm_is_a_checked_replaceable_run_config_field():
    config = estimator.RunConfig()
    assert config.save_on_sigterm is True
    assert "save_on_sigterm" not in repr(config)
    off = config.replace(save_on_sigterm=False)
    assert off.save_on_sigterm is False and "save_on_sigterm=False" in repr(off)
    with pytest.raises(ValueError, match="save_on_sigterm must be True or False") as info:
        estimator.RunConfig(save_on_sigterm="no")
    assert "Received: save_on_sigterm='no'" in str(info.value)
