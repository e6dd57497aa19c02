"""Faults: a checkpoint write that fails, NaN loss, corrupted checkpoints. Each leaves
model_dir with complete checkpoints only, and says what happened and what to do."""

import glob
import json
import os
import shutil

import numpy as np
import pytest
import tensorflow.compat.v1 as tf
from helpers import SCRIPTS, classifier_model_fn, dataset_input_fn, make_estimator, run_python

import keras_estimator as estimator
from keras_estimator.checkpoint.checkpoint_files import BrokenCheckpointStateError


def test_a_failed_checkpoint_write_keeps_the_previous_one_and_training_resumes(tmp_path):
    result = run_python(
        os.path.join(SCRIPTS, "write_failure.py"), str(tmp_path / "model"), timeout=240
    )
    assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
    report = json.loads(result.stdout.split("REPORT ")[1])
    assert "Could not write the checkpoint for step 10" in report["error"]
    assert "File too large" in report["error"] and "model.ckpt-5, is intact" in report["error"]
    assert report["after_failure"] == "model.ckpt-5" and report["readable"]
    assert report["leftovers"] == []  # no temporary file of the failed write remains
    assert report["resumed"] == 10  # from step 5 again, never backwards past it


def test_nan_loss_raises_and_keeps_the_last_good_checkpoint(tmp_path, toy_data):
    x, y = toy_data

    def model_fn(features, labels, mode, params):
        spec = classifier_model_fn(features, labels, mode, params)
        if mode != estimator.ModeKeys.TRAIN:
            return spec
        step = tf.train.get_global_step()
        poisoned = tf.where(step >= 7, spec.loss * np.nan, spec.loss)
        return spec._replace(loss=poisoned)

    config = estimator.RunConfig(save_checkpoints_steps=5, log_step_count_steps=1)
    est = estimator.Estimator(model_fn, str(tmp_path), config=config, params={})
    with pytest.raises(tf.train.NanLossDuringTrainingError):
        est.train(dataset_input_fn(x, y, 16, repeat=True), steps=20)
    latest = est.latest_checkpoint()
    assert latest.endswith("model.ckpt-5")  # nothing saved from the NaN steps on
    reader = tf.train.load_checkpoint(latest)
    for name in reader.get_variable_to_shape_map():
        value = reader.get_tensor(name)
        assert np.all(np.isfinite(value)), name


@pytest.fixture(scope="module")
def trained_dir(tmp_path_factory, toy_data_module):
    x, y = toy_data_module
    model_dir = str(tmp_path_factory.mktemp("trained"))
    config = estimator.RunConfig(save_checkpoints_steps=5)
    est = estimator.Estimator(classifier_model_fn, model_dir, config=config, params={})
    est.train(dataset_input_fn(x, y, 16, repeat=True), steps=10)
    return model_dir


@pytest.fixture(scope="module")
def toy_data_module():
    rng = np.random.RandomState(0)
    x = rng.randn(64, 8).astype(np.float32)
    return x, np.argmax(x[:, :3], 1).astype(np.int64)


def truncate_data(model_dir):
    path = glob.glob(os.path.join(model_dir, "model.ckpt-10.data-*"))[0]
    with open(path, "r+b") as f:
        f.truncate(10)
    return "Its .data file is damaged or truncated", ValueError


def garbage_index(model_dir):
    with open(os.path.join(model_dir, "model.ckpt-10.index"), "wb") as f:
        f.write(b"not an index" * 8)
    return "Could not read checkpoint", ValueError


def state_names_missing_prefix(model_dir):
    with open(os.path.join(model_dir, "checkpoint"), "w") as f:
        f.write('model_checkpoint_path: "model.ckpt-99"\n'
                'all_model_checkpoint_paths: "model.ckpt-5"\n'
                'all_model_checkpoint_paths: "model.ckpt-99"\n')  # fmt: skip
    return "names", BrokenCheckpointStateError


@pytest.mark.parametrize("corrupt", [truncate_data, garbage_index, state_names_missing_prefix])
def test_corrupted_checkpoint_errors_name_the_file_and_older_ones_still_work(
    tmp_path, trained_dir, toy_data_module, corrupt
):
    x, y = toy_data_module
    model_dir = str(tmp_path / "model")
    shutil.copytree(trained_dir, model_dir)
    message, error = corrupt(model_dir)
    est = make_estimator(model_dir)
    for call in (
        lambda: est.evaluate(dataset_input_fn(x, y, 16)),
        lambda: est.train(dataset_input_fn(x, y, 16, repeat=True), steps=1),
    ):
        with pytest.raises(error) as info:
            call()
        text = str(info.value)
        assert message in text and "model.ckpt-" in text and "checkpoint_path=" in text
    older = os.path.join(model_dir, "model.ckpt-5")
    metrics = est.evaluate(dataset_input_fn(x, y, 16), checkpoint_path=older)
    assert metrics["global_step"] == 5
    predictions = list(est.predict(dataset_input_fn(x[:3], batch_size=3), checkpoint_path=older))
    assert len(predictions) == 3
    # Falling back for training: point the state file at the older, complete checkpoint.
    with open(os.path.join(model_dir, "checkpoint"), "w") as f:
        f.write('model_checkpoint_path: "model.ckpt-5"\n')
    est.train(dataset_input_fn(x, y, 16, repeat=True), steps=2)
    assert est.get_variable_value("global_step") == 7


def test_checkpoint_read_errors_pickle(tmp_path, trained_dir):
    import pickle

    from keras_estimator.checkpoint.checkpoint_files import open_reader

    bad = tmp_path / "bad"
    bad.write_bytes(b"")
    with pytest.raises(ValueError) as info:
        open_reader(str(bad))
    again = pickle.loads(pickle.dumps(info.value))
    assert type(again) is type(info.value) and str(again) == str(info.value)


def test_vector_metrics_are_returned_but_not_in_history(tmp_path, toy_data):
    x, y = toy_data

    def model_fn(features, labels, mode, params):
        spec = classifier_model_fn(features, labels, mode, params)
        if mode != estimator.ModeKeys.EVAL:
            return spec
        vector = tf.metrics.mean_tensor(tf.reduce_mean(features["x"], 0))
        return spec._replace(eval_metric_ops={**spec.eval_metric_ops, "mean_x": vector})

    est = make_estimator(tmp_path, model_fn)
    est.train(dataset_input_fn(x, y, 16, repeat=True), steps=2)
    metrics = est.evaluate(dataset_input_fn(x, y, 64))
    assert metrics["mean_x"].shape == (8,)
    assert "mean_x" not in est.history.evaluations[2] and "accuracy" in est.history.evaluations[2]
