"""A full disk (a real one: a small tmpfs, ENOSPC) during a checkpoint save and during an
export: a clean error naming what is intact, nothing half-written left behind, and the same
calls succeed once space is freed. Mounting needs root (or CAP_SYS_ADMIN): elsewhere these
tests are skipped with the reason; tests/reliability/test_faults.py covers a failing write
with RLIMIT_FSIZE everywhere."""

import os
import subprocess
import tempfile

import pytest
import tensorflow as tf2
import tensorflow.compat.v1 as tf
from helpers import dataset_input_fn, make_estimator

from keras_estimator import export
from keras_estimator.checkpoint.checkpoint_files import CheckpointWriteError


def _mount_tmpfs(mount_point):
    return subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mount_point)],
        capture_output=True,
        text=True,
    )


def _why_no_tmpfs():
    """Why a tmpfs cannot be mounted here ("" when it can): one trial mount at collection."""
    if os.geteuid() != 0:
        return "mounting a tmpfs needs root; RLIMIT_FSIZE covers write failures instead"
    with tempfile.TemporaryDirectory() as trial:
        result = _mount_tmpfs(trial)
        if result.returncode != 0:
            return f"mount -t tmpfs is not allowed here: {result.stderr.strip()}"
        subprocess.run(["umount", "-l", trial], check=False)
    return ""


_NO_TMPFS = _why_no_tmpfs()
pytestmark = pytest.mark.skipif(bool(_NO_TMPFS), reason=_NO_TMPFS or "tmpfs available")


@pytest.fixture
def small_disk(tmp_path):
    """A 4 MiB tmpfs mounted at tmp_path/disk, unmounted after the test."""
    mount_point = tmp_path / "disk"
    mount_point.mkdir()
    result = _mount_tmpfs(mount_point)
    assert result.returncode == 0, result.stderr  # the trial mount at collection worked
    yield str(mount_point)
    subprocess.run(["umount", "-l", str(mount_point)], check=False)


def fill(directory):
    """Fills the file system of `directory` to the last byte; returns the ballast's path."""
    ballast = os.path.join(directory, "ballast")
    with open(ballast, "wb", buffering=0) as f:
        for size in (1 << 20, 1 << 12, 1):
            try:
                while True:
                    f.write(b"\0" * size)
            except OSError:
                continue
    return ballast


class FillDiskBeforeSave(tf.train.CheckpointSaverListener):
    """Fills the disk before the checkpoint save of `step` (model_dir's lock is held by
    then, and training has run)."""

    def __init__(self, directory, step):
        self.directory, self.step, self.ballast = directory, step, None

    def before_save(self, session, global_step_value):
        if global_step_value == self.step:
            self.ballast = fill(self.directory)


def test_a_full_disk_during_a_save_keeps_the_last_checkpoint_and_training_resumes(
    small_disk, toy_data
):
    x, y = toy_data
    model_dir = os.path.join(small_disk, "model")
    est = make_estimator(model_dir, save_checkpoints_steps=5, save_summary_steps=None)
    train = dataset_input_fn(x, y, 16, repeat=True)
    est.train(train, steps=5)
    full = FillDiskBeforeSave(small_disk, 10)
    with pytest.raises(CheckpointWriteError) as info:
        est.train(train, steps=5, saving_listeners=[full])
    message = str(info.value)
    assert "Could not write the checkpoint for step 10" in message
    assert "No space left on device" in message and "model.ckpt-5, is intact" in message
    assert os.path.basename(est.latest_checkpoint()) == "model.ckpt-5"
    leftovers = [n for n in os.listdir(model_dir) if "ckpt-10" in n or "tmp" in n or "temp" in n]
    assert leftovers == []  # nothing half-written of the failed save

    os.remove(full.ballast)
    est.train(train, steps=5)
    assert est.get_variable_value("global_step") == 10  # from step 5 again
    assert os.path.basename(est.latest_checkpoint()) == "model.ckpt-10"


def test_a_full_disk_during_an_export_leaves_nothing_and_the_export_then_succeeds(
    small_disk, toy_data, tmp_path
):
    x, y = toy_data
    est = make_estimator(tmp_path / "model")  # model_dir elsewhere: only the export is full
    est.train(dataset_input_fn(x, y, 16, repeat=True), steps=2)
    receiver = export.build_raw_serving_input_receiver_fn(
        {"x": tf.TensorSpec([None, 8], tf.float32)}
    )
    base = os.path.join(small_disk, "export")
    ballast = fill(small_disk)
    with pytest.raises((OSError, tf.errors.OpError)) as info:
        est.export_saved_model(base, receiver)
    assert "No space left on device" in str(info.value)
    assert not os.path.exists(base)  # the call made it, and removed it again

    os.remove(ballast)
    path = est.export_saved_model(base, receiver).decode()
    assert os.listdir(base) == [os.path.basename(path)]  # no temp-* of the failed export
    serve = tf2.saved_model.load(path).signatures["serving_default"]
    assert serve(x=tf.constant(x[:2]))["probabilities"].shape == (2, 3)
