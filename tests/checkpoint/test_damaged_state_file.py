"""A damaged `checkpoint` state file (cut short by a crash or a partial copy, binary junk,
empty) while complete `model.ckpt-*` files are there costs no work: training resumes from the
newest complete checkpoint, no checkpoint file is overwritten, the state file is rewritten by
the next save, and pruning counts every complete checkpoint. tf.estimator 2.15 ignored such a
file ("Checkpoint ignored"), started again from step 0 and overwrote model.ckpt-0, -2, ...

Real TensorFlow checkpoints under tmp_path.
"""

import hashlib
import logging
import os
import shutil

import numpy as np
import pytest
import tensorflow as tf
from helpers import dataset_input_fn, make_estimator

from keras_estimator.checkpoint.checkpoint_files import latest_checkpoint


@pytest.fixture(scope="module")
def data():
    rng = np.random.RandomState(0)
    x = rng.randn(64, 8).astype(np.float32)
    return x, np.argmax(x[:, :3], 1).astype(np.int64)


@pytest.fixture(scope="module")
def trained(tmp_path_factory, data):
    """A model_dir with complete checkpoints at steps 0, 2, 4 and 6."""
    model_dir = str(tmp_path_factory.mktemp("trained") / "model")
    train(model_dir, data, 6)
    return model_dir


def train(model_dir, data, steps, **config):
    x, y = data
    est = make_estimator(model_dir, **{"save_checkpoints_steps": 2, **config})
    est.train(dataset_input_fn(x, y, 16, repeat=True), steps=steps)
    return est


def digests(model_dir):
    """{checkpoint file name: md5 of its bytes}."""
    found = {}
    for name in os.listdir(model_dir):
        if name.startswith("model.ckpt-"):
            with open(os.path.join(model_dir, name), "rb") as f:
                found[name] = hashlib.md5(f.read()).hexdigest()
    return found


def steps_with_index(model_dir):
    names = os.listdir(model_dir)
    return sorted(
        int(n[len("model.ckpt-") : -len(".index")]) for n in names if n.endswith(".index")
    )


def cut_in_half(text):
    return text[: len(text) // 2].encode()  # mid-line: "all_model_checkpoint_pa"


def binary(text):
    return b"\x80\xff\x00\x13 not a checkpoint state \xfe"


def empty(text):
    return b""


@pytest.mark.parametrize("damage", [cut_in_half, binary, empty])
def test_a_damaged_state_file_resumes_from_the_newest_complete_checkpoint(
    tmp_path, trained, data, damage, caplog
):
    model_dir = str(tmp_path / "model")
    shutil.copytree(trained, model_dir)
    state_file = os.path.join(model_dir, "checkpoint")
    with open(state_file) as f:
        text = f.read()
    with open(state_file, "wb") as f:
        f.write(damage(text))
    before = digests(model_dir)

    with caplog.at_level(logging.WARNING, logger="keras_estimator"):
        assert latest_checkpoint(model_dir) == os.path.join(model_dir, "model.ckpt-6")
        est = train(model_dir, data, 2)
    damaged_lines = [r for r in caplog.records if "is damaged" in r.getMessage()]
    assert len(damaged_lines) == 1  # one line, however often the state is read
    message = damaged_lines[0].getMessage()
    assert state_file in message and "model.ckpt-6" in message
    assert "['model.ckpt-0', 'model.ckpt-2', 'model.ckpt-4', 'model.ckpt-6']" in message

    assert est.get_variable_value("global_step") == 8  # from step 6 on, not from 0
    after = digests(model_dir)
    assert {name: after.get(name) for name in before} == before  # no file was rewritten
    state = tf.train.get_checkpoint_state(model_dir)  # rewritten whole by the save at 8
    assert os.path.basename(state.model_checkpoint_path) == "model.ckpt-8"
    listed = [os.path.basename(p) for p in state.all_model_checkpoint_paths]
    assert listed == [
        "model.ckpt-0",
        "model.ckpt-2",
        "model.ckpt-4",
        "model.ckpt-6",
        "model.ckpt-8",
    ]
    x, y = data
    assert est.evaluate(dataset_input_fn(x, y, 32))["global_step"] == 8


def test_pruning_after_a_rebuilt_state_counts_every_complete_checkpoint(tmp_path, trained, data):
    model_dir = str(tmp_path / "model")
    shutil.copytree(trained, model_dir)
    with open(os.path.join(model_dir, "checkpoint"), "wb") as f:
        f.write(b'model_checkpoint_path: "model.ckpt-6"\nall_model_checkpoint_pa')
    train(model_dir, data, 2, keep_checkpoint_max=3)
    assert steps_with_index(model_dir) == [4, 6, 8]  # 0 and 2 pruned though never listed
    listed = tf.train.get_checkpoint_state(model_dir).all_model_checkpoint_paths
    assert [os.path.basename(p) for p in listed] == ["model.ckpt-4", "model.ckpt-6", "model.ckpt-8"]


def test_a_complete_checkpoint_newer_than_the_state_file_names_is_pruned_in_turn(
    tmp_path, trained, data
):
    # A save killed between its checkpoint's rename and the state file's leaves a complete
    # checkpoint the state file does not name (model.ckpt-7 here, a copy of -6's files).
    # Pruning must know it, or it stays forever.
    model_dir = str(tmp_path / "model")
    shutil.copytree(trained, model_dir)
    for name in os.listdir(model_dir):
        if name.startswith("model.ckpt-6."):
            shutil.copy(
                os.path.join(model_dir, name),
                os.path.join(model_dir, "model.ckpt-7." + name.split(".", 2)[2]),
            )
    with open(os.path.join(model_dir, "checkpoint"), "w") as f:
        f.write('model_checkpoint_path: "model.ckpt-4"\n'
                'all_model_checkpoint_paths: "model.ckpt-2"\n'
                'all_model_checkpoint_paths: "model.ckpt-4"\n')  # fmt: skip
    train(model_dir, data, 6, keep_checkpoint_max=2)  # from 4 to 10
    assert steps_with_index(model_dir) == [0, 8, 10]  # 0: older, unlisted, never touched


def test_a_damaged_state_file_without_complete_checkpoints_starts_over(tmp_path, data):
    model_dir = tmp_path / "model"
    model_dir.mkdir()
    (model_dir / "checkpoint").write_bytes(b"\xff\xfe junk")
    assert latest_checkpoint(str(model_dir)) is None  # nothing to lose
    est = train(str(model_dir), data, 2)
    assert est.get_variable_value("global_step") == 2
    assert os.path.basename(est.latest_checkpoint()) == "model.ckpt-2"
