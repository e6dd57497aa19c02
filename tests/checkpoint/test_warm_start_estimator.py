"""warm_start_from on the Estimator: applied once, only into an empty model_dir."""

import numpy as np
import pytest
import tensorflow as tf2
import tensorflow.compat.v1 as tf
from helpers import classifier_model_fn, dataset_input_fn, make_estimator

import keras_estimator as estimator


def bigger_model_fn(features, labels, mode, params):
    return classifier_model_fn(features, labels, mode, dict(params, hidden=32))


def test_warm_start_from_a_model_dir_then_resume_from_own_checkpoints(tmp_path, toy_data):
    x, y = toy_data
    source = make_estimator(tmp_path / "src")
    source.train(dataset_input_fn(x, y, 32, repeat=True), steps=20)
    kernel = source.get_variable_value("dense/kernel")

    warm = estimator.Estimator(
        classifier_model_fn,
        model_dir=str(tmp_path / "warm"),
        params={"lr": 0.0},  # nothing moves: the values are the warm-started ones
        warm_start_from=str(tmp_path / "src"),
    )
    # Predicting before any training already uses the warm-started weights.
    want = [p["probabilities"] for p in source.predict(dataset_input_fn(x[:4], batch_size=4))]
    got = [p["probabilities"] for p in warm.predict(dataset_input_fn(x[:4], batch_size=4))]
    np.testing.assert_allclose(got, want, rtol=1e-6)
    warm.train(dataset_input_fn(x, y, 32, repeat=True), steps=3)
    np.testing.assert_array_equal(warm.get_variable_value("dense/kernel"), kernel)
    # The default warm-starts trainable variables only: global step and slots start fresh.
    assert warm.get_variable_value("global_step") == 3

    # model_dir now has a checkpoint: the warm start is not applied again.
    changed = estimator.Estimator(
        classifier_model_fn,
        model_dir=str(tmp_path / "warm"),
        params={"lr": 0.5},
        warm_start_from=str(tmp_path / "src"),
    )
    changed.train(dataset_input_fn(x, y, 32, repeat=True), steps=5)
    assert changed.get_variable_value("global_step") == 8
    assert not np.array_equal(changed.get_variable_value("dense/kernel"), kernel)


def test_warm_start_settings_and_export_from_the_warm_start(tmp_path, toy_data):
    x, y = toy_data
    source = make_estimator(tmp_path / "src")
    source.train(dataset_input_fn(x, y, 32, repeat=True), steps=5)
    settings = estimator.WarmStartSettings(
        ckpt_to_initialize_from=source.latest_checkpoint(), vars_to_warm_start="dense_1/.*"
    )
    partial = estimator.Estimator(
        classifier_model_fn, model_dir=str(tmp_path / "p"), params={}, warm_start_from=settings
    )
    fn = estimator.export.build_raw_serving_input_receiver_fn(
        {"x": tf.TensorSpec([None, 8], tf.float32)}
    )
    # Untrained: the export takes the warm-start checkpoint's values, as tf.estimator did.
    exported = tf2.saved_model.load(partial.export_saved_model(str(tmp_path / "e"), fn).decode())
    values = {v.name: v.numpy() for v in exported.variables_used}
    np.testing.assert_array_equal(
        values["dense/kernel:0"], source.get_variable_value("dense/kernel")
    )
    # Training warm-starts only what vars_to_warm_start selects.
    partial.train(dataset_input_fn(x, y, 32), steps=1)
    zero_step = str(tmp_path / "p" / "model.ckpt-0")
    np.testing.assert_array_equal(
        tf.train.load_variable(zero_step, "dense_1/kernel"),
        source.get_variable_value("dense_1/kernel"),
    )
    assert not np.array_equal(
        tf.train.load_variable(zero_step, "dense/kernel"), source.get_variable_value("dense/kernel")
    )


def test_warm_start_shape_mismatch_names_the_variable_and_leaves_model_dir_empty(
    tmp_path, toy_data
):
    x, y = toy_data
    source = make_estimator(tmp_path / "src")
    source.train(dataset_input_fn(x, y, 32, repeat=True), steps=2)
    bigger = estimator.Estimator(
        bigger_model_fn,
        model_dir=str(tmp_path / "b"),
        params={},
        warm_start_from=str(tmp_path / "src"),
    )
    with pytest.raises(ValueError, match=r"Shape of variable dense/kernel \(\[8, 32\]\)"):
        bigger.train(dataset_input_fn(x, y, 32, repeat=True), steps=2)
    assert not (tmp_path / "b").exists() or not list((tmp_path / "b").glob("*.index"))
