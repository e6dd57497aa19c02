"""kill -9 of a training process at random moments, checkpoints being written included.

A chain of `scripts/crash/train_forever.py` processes trains in one model_dir
(save_checkpoints_steps=5, keep_checkpoint_max=2); each is killed with SIGKILL, the
directory is checked, and the next process resumes from it (kill, resume, kill, ...).
Trials aim the kill at one of four moments, in turn:

- random: a random delay after training started;
- bundle: while a checkpoint's `.index` / `.data` files are written (`*.tempstate*` seen);
- state: after the bundle, while the `checkpoint` state file is rewritten
  (`checkpoint.tmp*` seen);
- gc: while `keep_checkpoint_max` garbage collection deletes an old checkpoint.

After each kill: `tf.train.latest_checkpoint` names a complete checkpoint (every variable
reads back), every path in `all_model_checkpoint_paths` exists, the checkpoint is at least
the last one the process reported saved and at most the last one it started to save, and
the next process starts from exactly that step (the global step never goes backwards).
Finally this process resumes with `train(steps=N)` and ends at that step + N.

The default tier runs 4 trials (one of each moment); the slow tier (`-m slow`) runs 24. A
kill aimed at a moment can still come after the write it aimed at finished (on a fast disk
a write lasts milliseconds): while no kill has left a write half done, up to EXTRA_TRIALS
more trials aim at the three write moments, so the test's own requirement (at least one kill
inside a write) does not depend on the machine's speed.
"""

import os
import random
import signal
import threading
import time

import numpy as np
import pytest
import tensorflow as tf
from helpers import SCRIPTS, dataset_input_fn, make_estimator, start_python

PHASES = ("random", "bundle", "state", "gc")
KEEP_MAX = 2  # as in the script
SCRIPT = os.path.join(SCRIPTS, "crash", "train_forever.py")
STARTUP_TIMEOUT = 120  # seconds for a process to import TensorFlow and start training
TARGET_TIMEOUT = 30  # seconds to see the moment a trial aims at
EXTRA_TRIALS = 8  # at most, only while no kill has landed inside a write
VARIABLES = {"global_step", "dense/kernel", "dense/bias", "dense_1/kernel", "dense_1/bias"}


def _transient(name):
    """Files that exist only while a checkpoint (or the state file) is being written."""
    return ".tempstate" in name or "_temp" in name or name.startswith("checkpoint.tmp")


def _half_deleted(names):
    """Data files without their index: a write or a deletion cut short between the two."""
    return sorted(
        n
        for n in names
        if n.endswith(".data-00000-of-00001")
        and n.replace(".data-00000-of-00001", ".index") not in names
    )


def _census(model_dir):
    """What model_dir holds, by kind (kills leave temporary and half-deleted files)."""
    names = set(os.listdir(model_dir))
    listed = {
        os.path.basename(p)
        for p in tf.train.get_checkpoint_state(model_dir).all_model_checkpoint_paths
    }
    kinds = {
        "events": [n for n in names if n.startswith("events.out")],
        "state": [n for n in names if n == "checkpoint"],
        "listed": [n for n in names if n.rsplit(".", 1)[0].split(".data")[0] in listed],
        "temporary": [n for n in names if _transient(n)],
        "half-deleted": _half_deleted(names),
    }
    counted = set().union(*kinds.values())
    kinds["unlisted complete"] = sorted(names - counted)
    return {kind: len(found) for kind, found in kinds.items()}


def _step_of(path):
    return int(path.rsplit("-", 1)[1])


class Trainer:
    """One train_forever.py process; its stdout lines are collected by a thread."""

    def __init__(self, model_dir, log_path):
        self._log = open(log_path, "w")  # noqa: SIM115 - closed in finish()
        self.proc = start_python(
            SCRIPT, model_dir, env={"KERAS_ESTIMATOR_PROGRESS": "0"}, stderr=self._log
        )
        self.lines = []
        self.started = threading.Event()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.append(line.split())
            if line.startswith("START"):
                self.started.set()

    def values(self, word):
        return [int(parts[1]) for parts in list(self.lines) if parts and parts[0] == word]

    def kill(self):
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=60)
        self._reader.join(timeout=60)
        self._log.close()


def _wait_for_moment(model_dir, phase, deadline):
    """Polls model_dir until the moment `phase` aims at; False if it did not come in time."""
    before = set(os.listdir(model_dir))
    indexes = {n for n in before if n.endswith(".index")}
    while time.monotonic() < deadline:
        names = set(os.listdir(model_dir))
        new = names - before
        if phase == "bundle" and any(".tempstate" in n for n in new):
            return True
        if phase == "state" and any(n.startswith("checkpoint.tmp") for n in new):
            return True
        if phase == "gc":
            if indexes - names:
                return True  # a checkpoint known complete is being deleted
            indexes |= {n for n in names if n.endswith(".index")}
    return False


def _check_model_dir(model_dir):
    """The checkpoint state after a kill; returns the latest checkpoint's step."""
    state = tf.train.get_checkpoint_state(model_dir)
    assert state is not None, f"no checkpoint state file: {sorted(os.listdir(model_dir))}"
    latest = tf.train.latest_checkpoint(model_dir)
    assert latest is not None, f"latest_checkpoint is None: {sorted(os.listdir(model_dir))}"
    listed = list(state.all_model_checkpoint_paths)  # joined to model_dir by TF
    assert 1 <= len(listed) <= KEEP_MAX, listed
    assert os.path.normpath(listed[-1]) == os.path.normpath(latest), (listed, latest)
    for path in listed:
        assert os.path.isfile(path + ".index"), f"{path}.index is missing"
        assert os.path.isfile(path + ".data-00000-of-00001"), f"{path}.data is missing"
        reader = tf.train.load_checkpoint(path)
        shapes = reader.get_variable_to_shape_map()
        assert VARIABLES <= set(shapes), sorted(shapes)
        for name in shapes:
            value = reader.get_tensor(name)  # every variable reads back in full
            assert np.all(np.isfinite(value)), name
        assert int(reader.get_tensor("global_step")) == _step_of(path)
    return _step_of(latest)


class _StartStep(tf.compat.v1.train.SessionRunHook):
    def begin(self):
        self._step = tf.compat.v1.train.get_global_step()

    def after_create_session(self, session, coord):
        self.value = int(session.run(self._step))


@pytest.mark.parametrize(
    "trials",
    [pytest.param(4, id="4-trials"), pytest.param(24, id="24-trials", marks=pytest.mark.slow)],
)
def test_kill_9_at_random_moments_resumes_from_the_newest_complete_checkpoint(tmp_path, trials):
    model_dir = str(tmp_path / "model")
    expected_start = 0
    hits = []  # trials whose kill left a checkpoint write or deletion half done
    report = []
    started = time.monotonic()
    trial = -1
    while trial + 1 < trials or (not hits and trial + 1 < trials + EXTRA_TRIALS):
        trial += 1
        rng = random.Random(1000 + trial)
        # The first `trials` cycle through the four moments; extra ones aim at writes only.
        phase = PHASES[trial % len(PHASES)] if trial < trials else PHASES[1 + trial % 3]
        orphans = set(os.listdir(model_dir)) if os.path.isdir(model_dir) else set()
        trainer = Trainer(model_dir, str(tmp_path / f"trial{trial}.log"))
        try:
            assert trainer.started.wait(STARTUP_TIMEOUT), f"trial {trial}: no START line"
            start = trainer.values("START")[0]
            assert start == expected_start, (
                f"trial {trial}: training started at step {start}, the latest checkpoint "
                f"is at step {expected_start}"
            )
            time.sleep(rng.uniform(0.0, 1.0 if phase == "random" else 0.4))
            if phase != "random":
                deadline = time.monotonic() + TARGET_TIMEOUT
                assert _wait_for_moment(model_dir, phase, deadline), (
                    f"trial {trial}: never saw the {phase} moment; output "
                    f"{trainer.lines[-5:]}, exit {trainer.proc.poll()}"
                )
            os.kill(trainer.proc.pid, signal.SIGKILL)
        finally:
            trainer.kill()
        # What the dead process left (listed after it is gone: a kill still in flight when
        # the directory is read could let the write it aimed at finish).
        names = set(os.listdir(model_dir))
        left = sorted(n for n in names - orphans if _transient(n))
        left += sorted(set(_half_deleted(names)) - set(_half_deleted(orphans)))
        assert trainer.proc.returncode == -signal.SIGKILL, (
            f"trial {trial}: the process ended by itself ({trainer.proc.returncode}); see "
            f"{tmp_path / f'trial{trial}.log'}"
        )
        step = _check_model_dir(model_dir)
        saved, saving = trainer.values("SAVED"), trainer.values("SAVING")
        # Committed saves are never lost; a save only started is not named before it ends.
        assert step >= max(saved, default=start), (trial, phase, step, saved[-3:])
        assert step <= max(saving, default=start), (trial, phase, step, saving[-3:])
        assert step >= start  # never backwards past the checkpoint training started from
        if left:
            hits.append(trial)
        report.append(f"{trial}:{phase} {start}->{step} left={len(left)}")
        expected_start = step

    # Resume in this process: train(steps=N) starts at the checkpoint and finishes.
    est = make_estimator(model_dir, save_checkpoints_steps=5, keep_checkpoint_max=KEEP_MAX)
    assert est.get_variable_value("global_step") == expected_start
    rng = np.random.RandomState(0)
    x = rng.randn(256, 8).astype("float32")
    y = np.argmax(x[:, :3], 1).astype("int64")
    start_hook = _StartStep()
    est.train(dataset_input_fn(x, y, 16, repeat=True), steps=12, hooks=[start_hook])
    assert start_hook.value == expected_start
    assert est.get_variable_value("global_step") == expected_start + 12
    assert _check_model_dir(model_dir) == expected_start + 12
    # The resumed writer cleared what the killed saves left half-written.
    assert not [n for n in os.listdir(model_dir) if ".tempstate" in n or "_temp" in n]

    print(
        f"\ncrash safety: {trial + 1} trials in {time.monotonic() - started:.1f}s; "
        f"kills that left a checkpoint write or deletion half done: {hits}; "
        + "; ".join(report)
        + f"; files left in model_dir: {_census(model_dir)}"
    )
    # At least one kill landed while a checkpoint was being written or deleted.
    assert hits, report
