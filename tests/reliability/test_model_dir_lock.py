"""One trainer per model_dir: the chief's train() holds `train.lock` in model_dir.

A second trainer (another process, or another Estimator of this process) gets an error
naming the holder; readers (evaluate, predict, get_variable_value) never need the lock; a
lock left by a process killed with kill -9, by an earlier process with a reused PID, or by
another host whose heartbeat stopped is taken over; one from another host with a live
heartbeat is not. Lock files are made by hand here as another run would leave them."""

import json
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest
import tensorflow as tf
from helpers import SCRIPTS, dataset_input_fn, make_estimator, start_python

from keras_estimator.checkpoint import model_dir_lock
from keras_estimator.checkpoint.model_dir_lock import (
    LOCK_NAME,
    ModelDirLockedError,
    hold_training_lock,
)

SCRIPT = os.path.join(SCRIPTS, "interrupt_train.py")


def _train(est, toy_data, steps=2, **kwargs):
    x, y = toy_data
    est.train(dataset_input_fn(x, y, 16, repeat=True), steps=steps, **kwargs)


def _write_lock(model_dir, **fields):
    """A lock file as a run on this machine would write it, with `fields` replaced."""
    os.makedirs(model_dir, exist_ok=True)
    record = {
        "host": socket.gethostname(),
        "boot_id": model_dir_lock._this_machine()["boot_id"],
        "pid_namespace": model_dir_lock._this_machine()["pid_namespace"],
        "pid": os.getpid(),
        "process_start": None,
        "started": "2026-01-01 00:00:00 UTC",
        "command": "train.py --other",
        "token": "other",
    }
    record.update(fields)
    path = os.path.join(model_dir, LOCK_NAME)
    with open(path, "w") as f:
        json.dump(record, f)
    return path


def _wait_until(condition, what, timeout=10.0):
    """Polls `condition` every 0.05 s; fails naming `what` if it is still false after
    `timeout` seconds."""
    deadline = time.time() + timeout
    while not condition():
        assert time.time() < deadline, f"waited {timeout} s for {what} in vain"
        time.sleep(0.05)


def _dead_pid():
    """The PID of a process that has ended (and been reaped)."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_a_second_trainer_process_is_refused_readers_are_not_and_kill_9_is_taken_over(
    tmp_path, toy_data, caplog
):
    model_dir = str(tmp_path / "model")
    child = start_python(SCRIPT, model_dir)
    try:
        deadline = time.time() + 120
        while tf.train.latest_checkpoint(model_dir) is None:  # training, holding the lock
            assert time.time() < deadline and child.poll() is None, child.stdout.read()
            time.sleep(0.2)
        with open(os.path.join(model_dir, LOCK_NAME)) as f:
            holder = json.load(f)
        assert holder["pid"] == child.pid and holder["host"] == socket.gethostname()

        est = make_estimator(model_dir)
        with pytest.raises(ModelDirLockedError) as info:
            _train(est, toy_data)
        message = str(info.value)
        assert f"host {socket.gethostname()}, PID {child.pid}, since {holder['started']}" in message
        assert "another training run holds its lock" in message
        assert f"delete {os.path.join(model_dir, LOCK_NAME)}" in message
        assert "Fix: wait for that run to end or stop it, or train into another model_dir" in (
            message
        )
        assert info.value.holder["pid"] == child.pid
        # Readers need no lock.
        assert est.get_variable_value("global_step") == 0
        x, y = toy_data
        assert "loss" in est.evaluate(dataset_input_fn(x, y, 64), steps=2)
        assert "classes" in next(est.predict(dataset_input_fn(x, batch_size=8)))

        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=60)
    finally:
        child.kill()
        child.wait()
    assert os.path.exists(os.path.join(model_dir, LOCK_NAME))  # left by the killed holder
    with caplog.at_level(logging.WARNING, logger="keras_estimator"):
        _train(est, toy_data, steps=3)
    assert f"process {child.pid} is no longer running" in caplog.text
    assert est.get_variable_value("global_step") == 3
    assert not os.path.exists(os.path.join(model_dir, LOCK_NAME))


def test_the_lock_is_held_during_train_and_released_after_also_on_errors(tmp_path, toy_data):
    model_dir = str(tmp_path)
    seen = []

    class Look(tf.compat.v1.train.SessionRunHook):
        def after_run(self, run_context, run_values):
            with open(os.path.join(model_dir, LOCK_NAME)) as f:
                seen.append(json.load(f))

    est = make_estimator(model_dir)
    _train(est, toy_data, hooks=[Look()])
    assert seen and seen[0]["pid"] == os.getpid() and seen[0]["host"] == socket.gethostname()
    assert {"started", "command", "token"} <= set(seen[0])
    assert not os.path.exists(os.path.join(model_dir, LOCK_NAME))
    _train(est, toy_data)  # the same Estimator again, then another one: sequential is fine
    _train(make_estimator(model_dir), toy_data)
    assert est.get_variable_value("global_step") == 6

    class Fail(tf.compat.v1.train.SessionRunHook):
        def after_run(self, run_context, run_values):
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        _train(est, toy_data, hooks=[Fail()])
    assert not os.path.exists(os.path.join(model_dir, LOCK_NAME))


def test_a_call_that_fails_before_training_leaves_no_model_dir(tmp_path):
    def broken_input_fn():
        raise ValueError("no data")

    est = make_estimator(tmp_path / "new")
    with pytest.raises(ValueError, match="no data"):
        est.train(broken_input_fn, steps=1)
    assert not (tmp_path / "new").exists()


def test_another_estimator_of_this_process_training_in_a_thread_is_refused(tmp_path, toy_data):
    model_dir = str(tmp_path)
    errors, evaluated = [], []

    class Other(tf.compat.v1.train.SessionRunHook):
        def after_run(self, run_context, run_values):
            if errors:
                return
            other = make_estimator(model_dir)

            def second_trainer():
                try:
                    _train(other, toy_data)
                except ModelDirLockedError as exc:
                    errors.append(exc)

            thread = threading.Thread(target=second_trainer, name="second-trainer")
            thread.start()
            thread.join()
            evaluated.append(other.get_variable_value("global_step"))  # a reader

    _train(make_estimator(model_dir), toy_data, hooks=[Other()])
    assert len(errors) == 1, errors
    message = str(errors[0])
    assert f"this process (thread {threading.current_thread().name}) is already training" in (
        message
    )
    assert f"PID {os.getpid()}" in message
    assert evaluated == [0]


@pytest.fixture
def running_pid():
    """The PID of a process that runs during the test."""
    proc = subprocess.Popen(["sleep", "120"])
    yield proc.pid
    proc.kill()
    proc.wait()


def test_stale_locks_on_this_machine_are_taken_over(tmp_path, toy_data, caplog, running_pid):
    model_dir = str(tmp_path)
    est = make_estimator(model_dir)
    cases = {
        "process": (_dead_pid(), None),  # a crashed run
        "later": (running_pid, "1"),  # the PID now runs a process started later
        "restart": (os.getpid(), None),  # an earlier process of this PID (a container restart)
    }
    expected = {
        "process": "is no longer running",
        "later": "now belongs to a process started later",
        "restart": "written by an earlier process with this PID",
    }
    for name, (pid, start) in cases.items():
        _write_lock(model_dir, pid=pid, process_start=start)
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="keras_estimator"):
            _train(est, toy_data)
        assert expected[name] in caplog.text, name
        assert not os.path.exists(os.path.join(model_dir, LOCK_NAME)), name


def test_a_live_lock_on_this_machine_is_respected(tmp_path, toy_data, running_pid):
    start = model_dir_lock._process_start(running_pid)
    path = _write_lock(str(tmp_path), pid=running_pid, process_start=start)
    with pytest.raises(ModelDirLockedError, match=f"PID {running_pid}, since 2026-01-01"):
        _train(make_estimator(tmp_path), toy_data)
    assert json.load(open(path))["token"] == "other"  # left as it was


def test_another_hosts_lock_is_taken_over_only_when_its_heartbeat_is_old(
    tmp_path, toy_data, caplog
):
    model_dir = str(tmp_path)
    path = _write_lock(model_dir, host="other-host", boot_id="x", pid=123)
    est = make_estimator(model_dir)
    with pytest.raises(ModelDirLockedError) as info:
        _train(est, toy_data)
    message = str(info.value)
    assert "host other-host, PID 123, since 2026-01-01 00:00:00 UTC" in message
    assert "command 'train.py --other'; last heartbeat 0 s ago" in message
    assert "taken over once its heartbeat is older than 600 s" in message
    old = time.time() - 601
    os.utime(path, (old, old))
    with caplog.at_level(logging.WARNING, logger="keras_estimator"):
        _train(est, toy_data)
    assert "its heartbeat is 601 s old" in caplog.text
    assert not os.path.exists(path)


def test_an_unreadable_lock_is_refused_until_stale(tmp_path, toy_data, monkeypatch):
    model_dir = str(tmp_path)
    path = os.path.join(model_dir, LOCK_NAME)
    with open(path, "w") as f:
        f.write("{not json")
    est = make_estimator(model_dir)
    with pytest.raises(ModelDirLockedError, match="its lock file is unreadable"):
        _train(est, toy_data)
    monkeypatch.setenv(model_dir_lock.STALE_SECS_ENV, "0.5")
    time.sleep(0.6)
    _train(est, toy_data)
    assert not os.path.exists(path)


def test_the_heartbeat_refreshes_the_lock_and_notices_a_takeover(tmp_path, monkeypatch, caplog):
    monkeypatch.setenv(model_dir_lock.STALE_SECS_ENV, "1")  # a beat every 0.2 s
    with caplog.at_level(logging.WARNING, logger="keras_estimator"):
        with hold_training_lock(str(tmp_path), is_chief=True) as lock:
            old = time.time() - 100
            os.utime(lock.path, (old, old))
            # Polled, not a fixed sleep: on a loaded machine three 0.2 s beats may take longer
            # than 0.6 s to be scheduled. A lock never refreshed still fails here.
            _wait_until(lambda: time.time() - os.stat(lock.path).st_mtime < 5, "a refresh")
            _write_lock(str(tmp_path), host="other-host", token="theirs")
            _wait_until(
                lambda: "was removed or taken over by another run" in caplog.text,
                "the takeover noticed",
            )
    assert "was removed or taken over by another run" in caplog.text
    with open(lock.path) as f:
        assert json.load(f)["token"] == "theirs"  # release leaves the new holder's lock


def test_non_chief_tasks_take_no_lock_and_the_stale_time_is_checked(tmp_path, monkeypatch):
    with hold_training_lock(str(tmp_path / "m"), is_chief=False) as lock:
        assert lock is None
    assert not (tmp_path / "m").exists()
    monkeypatch.setenv(model_dir_lock.STALE_SECS_ENV, "soon")
    with pytest.raises(ValueError, match="Received: KERAS_ESTIMATOR_LOCK_STALE_SECS='soon'"):
        model_dir_lock.stale_after()


def test_a_lock_that_cannot_be_written_is_a_clear_error_and_leaves_no_directory(tmp_path):
    import resource

    model_dir = str(tmp_path / "new")
    previous = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a too-large write: EFBIG
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (64, hard))  # the lock record is larger
    try:
        with pytest.raises(model_dir_lock.ModelDirLockWriteError) as info:
            with hold_training_lock(model_dir, is_chief=True):
                pass
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, previous)
    message = str(info.value)
    assert f"Could not write the lock file {os.path.join(model_dir, LOCK_NAME)}" in message
    assert "File too large" in message and "nothing was trained" in message
    assert not os.path.exists(model_dir)
