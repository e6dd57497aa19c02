"""model_dir safety: startup cleanup and checkpoint pruning delete only regular files that
keras_estimator wrote, inside model_dir (never through a link, a hostile `checkpoint` state
file or a glob); a failed save leaves nothing behind; the global step never wraps.

Everything runs on real files, links and directories under tmp_path with real TensorFlow.
"""

import logging
import os
import shutil

import numpy as np
import pytest
import tensorflow as tf
from helpers import dataset_input_fn, make_estimator

from keras_estimator.checkpoint.checkpoint_files import CheckpointWriteError
from keras_estimator.checkpoint.warm_start import warm_start_checkpoint
from keras_estimator.runtime.training_loop import GlobalStepOverflowError

DATA = ".data-00000-of-00001"
INT64_MAX = 2**63 - 1


@pytest.fixture
def data():
    rng = np.random.RandomState(0)
    x = rng.randn(64, 8).astype(np.float32)
    return x, np.argmax(x[:, :3], 1).astype(np.int64)


@pytest.fixture
def warnings_seen():
    """The keras_estimator logger's warnings during the test (its records go to TF's logger)."""
    seen = []

    class Keep(logging.Handler):
        def emit(self, record):
            seen.append(record.getMessage())

    handler = Keep(logging.WARNING)
    logger = logging.getLogger("keras_estimator")
    logger.addHandler(handler)
    yield seen
    logger.removeHandler(handler)


def train(model_dir, data, steps, **config):
    x, y = data
    config = {"save_checkpoints_steps": 5, **config}
    est = make_estimator(model_dir, **config)
    est.train(dataset_input_fn(x, y, 16, repeat=True), steps=steps)
    return est


def listed_steps(model_dir):
    state = tf.train.get_checkpoint_state(str(model_dir))
    return [int(p.rsplit("-", 1)[1]) for p in state.all_model_checkpoint_paths]


def bundle_steps(model_dir):
    """Steps of the checkpoints whose .index is in model_dir."""
    names = os.listdir(model_dir)
    return sorted(
        int(n[len("model.ckpt-") : -len(".index")]) for n in names if n.endswith(".index")
    )


def outside_tree(root):
    """A directory outside model_dir with files at two levels; returns its file listing."""
    os.makedirs(os.path.join(root, "sub"))
    for name in ("precious.txt", os.path.join("sub", "deep.txt")):
        with open(os.path.join(root, name), "w") as f:
            f.write("keep me")
    return tree(root)


def tree(root):
    return sorted(
        os.path.relpath(os.path.join(folder, name), root)
        for folder, _, files in os.walk(root)
        for name in files
    )


def write_state(model_dir, latest, paths):
    lines = [f'model_checkpoint_path: "{latest}"']
    lines += [f'all_model_checkpoint_paths: "{p}"' for p in paths]
    with open(os.path.join(model_dir, "checkpoint"), "w") as f:
        f.write("\n".join(lines) + "\n")


# -- 1. startup cleanup: links and directories named like leftovers ---------------------------
def test_startup_cleanup_never_follows_a_link_nor_deletes_a_directory(
    tmp_path, data, warnings_seen
):
    model_dir, outside = tmp_path / "model", str(tmp_path / "outside")
    model_dir.mkdir()
    before = outside_tree(outside)
    linked = ["model.ckpt-1_temp_x", "checkpoint.tmp-x", "model.ckpt-3.tempstate9"]
    for name in linked:
        os.symlink(outside, model_dir / name)  # links to a directory elsewhere
    os.symlink(os.path.join(outside, "precious.txt"), model_dir / "model.ckpt-4.index.tempstate7")
    (model_dir / "model.ckpt-2_temp").mkdir()  # a real directory with such a name
    (model_dir / "model.ckpt-2_temp" / "part-00000-of-00001.index").write_text("x")
    # Regular files of a write cut short are ours: they go, as before.
    ours = [f"model.ckpt-5{DATA}.tempstate123", "model.ckpt-5.index.tempstate4", "checkpoint.tmpab"]
    for name in ours:
        (model_dir / name).write_text("partial")

    train(model_dir, data, steps=5)

    assert tree(outside) == before  # nothing outside model_dir was touched
    names = set(os.listdir(model_dir))
    for name in [*linked, "model.ckpt-4.index.tempstate7"]:
        assert os.path.islink(model_dir / name), name  # left alone, not followed
    assert os.listdir(model_dir / "model.ckpt-2_temp") == ["part-00000-of-00001.index"]
    assert not names & set(ours)
    assert listed_steps(model_dir) == [0, 5]
    assert any("model.ckpt-1_temp_x alone" in w and "a link" in w for w in warnings_seen)
    assert any("model.ckpt-2_temp alone" in w and "a directory" in w for w in warnings_seen)


def test_pruning_unlinks_a_linked_checkpoint_file_but_never_its_target(tmp_path, data):
    model_dir = tmp_path / "model"
    train(model_dir, data, steps=5, keep_checkpoint_max=1)
    assert bundle_steps(model_dir) == [5]
    # The listed checkpoint's data file becomes a link to a copy outside model_dir.
    outside = tmp_path / "outside"
    outside.mkdir()
    shutil.move(model_dir / f"model.ckpt-5{DATA}", outside / "copy")
    os.symlink(outside / "copy", model_dir / f"model.ckpt-5{DATA}")
    content = (outside / "copy").read_bytes()

    est = train(model_dir, data, steps=5, keep_checkpoint_max=1)

    assert est.get_variable_value("global_step") == 10  # restored through the link
    assert listed_steps(model_dir) == [10]
    assert (outside / "copy").read_bytes() == content  # the link's target is intact
    assert os.path.islink(model_dir / f"model.ckpt-5{DATA}")  # the link itself left alone
    assert not (model_dir / "model.ckpt-5.index").exists()  # the regular file pruned


# -- 2. a hostile `checkpoint` state file --------------------------------------------------------
def test_state_file_entries_outside_model_dir_are_never_deleted(tmp_path, data, warnings_seen):
    model_dir = tmp_path / "model"
    train(model_dir, data, steps=5, keep_checkpoint_max=1)
    victim, elsewhere = tmp_path / "victim", tmp_path / "elsewhere"
    victim.mkdir()
    elsewhere.mkdir()
    precious = []
    for folder, prefix in ((victim, "a"), (victim, "x.ckpt-1"), (elsewhere, "b")):
        for suffix in (".index", DATA, ".meta"):
            (folder / (prefix + suffix)).write_text("not yours")
            precious.append(folder / (prefix + suffix))
    write_state(
        model_dir,
        "model.ckpt-5",
        ["../victim/a", str(elsewhere / "b"), "../victim/x.ckpt-*", "model.ckpt-5"],
    )

    est = train(model_dir, data, steps=20, keep_checkpoint_max=1)  # saves 10, 15, 20, 25

    assert est.get_variable_value("global_step") == 25
    assert all(path.read_text() == "not yours" for path in precious)
    # Our own old checkpoints are still pruned (tf.compat.v1 Saver's rule: the list keeps
    # the length it was recovered with, one deletion a save).
    assert bundle_steps(model_dir) == [15, 20, 25]
    assert listed_steps(model_dir) == [15, 20, 25]
    assert any("../victim/a" in w and "will not delete" in w for w in warnings_seen)
    assert any("Not deleting checkpoint" in w for w in warnings_seen)


def test_a_state_file_naming_another_directory_restores_from_it_but_never_prunes_it(tmp_path, data):
    source = tmp_path / "source"
    train(source, data, steps=5)
    source_files = tree(source)
    model_dir = tmp_path / "model"
    model_dir.mkdir()
    elsewhere = str(source / "model.ckpt-5")  # absolute, as 2.15's latest_checkpoint honoured
    write_state(model_dir, elsewhere, [elsewhere])

    est = make_estimator(model_dir, save_checkpoints_steps=5, keep_checkpoint_max=1)
    assert est.latest_checkpoint() == elsewhere
    assert est.get_variable_value("global_step") == 5
    x, y = data
    est.train(dataset_input_fn(x, y, 16, repeat=True), steps=10)  # saves 10 and 15

    assert est.get_variable_value("global_step") == 15
    assert listed_steps(model_dir) == [15]
    assert bundle_steps(model_dir) == [15]
    assert tree(source) == source_files  # restored from, never deleted


# -- 3. glob characters in model_dir ------------------------------------------------------------
def test_glob_characters_in_model_dir_prune_its_own_checkpoints_only(tmp_path, data):
    plain, bracketed = tmp_path / "run1", tmp_path / "run[1]"
    train(plain, data, steps=10, keep_checkpoint_max=5)
    plain_files = tree(plain)
    assert bundle_steps(plain) == [0, 5, 10]

    train(bracketed, data, steps=10, keep_checkpoint_max=1)
    assert bundle_steps(bracketed) == [10]
    assert listed_steps(bracketed) == [10]
    # A second train() call recovers the listed checkpoints by name, not by pattern.
    train(bracketed, data, steps=5, keep_checkpoint_max=1)
    assert bundle_steps(bracketed) == [15]
    assert listed_steps(bracketed) == [15]
    assert tree(plain) == plain_files  # `run[1]` never matched `run1`
    # Warm-starting from the directory finds its checkpoint by name too.
    assert warm_start_checkpoint(str(bracketed)) == str(bracketed / "model.ckpt-15")


# -- 5. leftovers of failed saves -------------------------------------------------------------
def test_a_save_failing_after_the_data_rename_removes_its_partial_checkpoint(
    tmp_path, data, warnings_seen
):
    model_dir = tmp_path / "model"
    train(model_dir, data, steps=5)
    # The bundle writer renames the .data file into place, then the .index file: a
    # directory in the index's place makes that second rename fail.
    (model_dir / "model.ckpt-10.index").mkdir()
    with pytest.raises(CheckpointWriteError, match="model.ckpt-5, is intact"):
        train(model_dir, data, steps=5)

    names = os.listdir(model_dir)
    assert [n for n in names if n.startswith("model.ckpt-10")] == ["model.ckpt-10.index"]
    assert not [n for n in names if "tempstate" in n or n.startswith("checkpoint.tmp")]
    assert listed_steps(model_dir) == [0, 5]
    assert any("model.ckpt-10.index alone" in w for w in warnings_seen)
    os.rmdir(model_dir / "model.ckpt-10.index")
    assert train(model_dir, data, steps=5).get_variable_value("global_step") == 10


def test_a_failed_state_file_write_removes_its_temporary_file_and_the_unlisted_bundle(
    tmp_path, data
):
    model_dir = tmp_path / "model"
    model_dir.mkdir()
    (model_dir / "checkpoint").mkdir()  # the state file's rename onto it fails
    with pytest.raises(CheckpointWriteError, match="Could not write the checkpoint for step 0"):
        train(model_dir, data, steps=5)

    left = sorted(n for n in os.listdir(model_dir) if not n.startswith("events.out"))
    assert left == ["checkpoint"]  # no checkpoint.tmp*, no model.ckpt-0 nobody lists
    assert os.listdir(model_dir / "checkpoint") == []


def test_startup_removes_unlisted_partial_checkpoints_newer_than_the_latest_listed(tmp_path, data):
    model_dir = tmp_path / "model"
    train(model_dir, data, steps=5)
    index, bundle = model_dir / "model.ckpt-5.index", model_dir / f"model.ckpt-5{DATA}"
    outside = tmp_path / "outside"
    outside.mkdir()
    shutil.copy(bundle, outside / "data")
    shutil.copy(bundle, model_dir / f"model.ckpt-10{DATA}")  # newer, no index: partial
    shutil.copy(index, model_dir / "model.ckpt-11.index")  # newer, no data: partial
    shutil.copy(bundle, model_dir / f"model.ckpt-3{DATA}")  # older: left as it is
    for name in ("model.ckpt-12.index", f"model.ckpt-12{DATA}"):  # newer but complete
        shutil.copy(model_dir / name.replace("-12", "-5"), model_dir / name)
    os.symlink(outside / "data", model_dir / f"model.ckpt-13{DATA}")  # partial, a link
    (model_dir / "model.ckpt-14.index").mkdir()  # partial, a directory

    train(model_dir, data, steps=1)

    names = set(os.listdir(model_dir))
    assert f"model.ckpt-10{DATA}" not in names and "model.ckpt-11.index" not in names
    assert {f"model.ckpt-3{DATA}", "model.ckpt-12.index", f"model.ckpt-12{DATA}"} <= names
    assert os.path.islink(model_dir / f"model.ckpt-13{DATA}")
    assert (outside / "data").read_bytes() == bundle.read_bytes()
    assert (model_dir / "model.ckpt-14.index").is_dir()
    # The complete, unlisted model.ckpt-12 (a save whose state update was cut short) is
    # counted by keep_checkpoint_max from now on: listed, pruned in its turn.
    assert listed_steps(model_dir) == [0, 5, 12, 6]


# -- 6. the global step near 2**63 ------------------------------------------------------------
def write_step(model_dir, step):
    """A checkpoint of model_dir's latest variables with the global step set to `step`."""
    reader = tf.train.load_checkpoint(tf.train.latest_checkpoint(str(model_dir)))
    variables = {
        name: tf.Variable(reader.get_tensor(name)) for name in reader.get_variable_to_shape_map()
    }
    variables["global_step"].assign(step)
    saver = tf.compat.v1.train.Saver(var_list=variables)
    return saver.save(None, os.path.join(str(model_dir), "model.ckpt"), global_step=step)


def test_training_refuses_to_wrap_the_global_step_past_int64(tmp_path, data):
    x, y = data
    model_dir = tmp_path / "model"
    train(model_dir, data, steps=1)
    near = INT64_MAX - 3
    written = write_step(model_dir, near)
    est = make_estimator(model_dir, save_checkpoints_steps=5)
    assert est.get_variable_value("global_step") == near

    with pytest.raises(GlobalStepOverflowError) as info:
        est.train(dataset_input_fn(x, y, 16, repeat=True), steps=10)
    message = str(info.value)
    assert "largest int64" in message and f"Received: global_step={near}, steps=10" in message
    assert isinstance(info.value, ValueError)
    # Without steps or max_steps (train until the input ends), the next chunk is checked.
    finite = dataset_input_fn(np.tile(x, (8, 1)), np.tile(y, 8), 16)  # 32 batches
    with pytest.raises(GlobalStepOverflowError, match="next run of steps"):
        est.train(finite)
    assert est.latest_checkpoint() == written  # nothing was saved past it
    assert est.get_variable_value("global_step") == near

    # Up to the largest int64 itself is fine.
    est.train(dataset_input_fn(x, y, 16, repeat=True), max_steps=INT64_MAX)
    assert est.get_variable_value("global_step") == INT64_MAX
    assert est.latest_checkpoint().endswith(f"model.ckpt-{INT64_MAX}")
