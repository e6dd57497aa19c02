"""model_dir in the tf.estimator layout: TF1 names, cadence, retention, resume, mismatch."""

import os

import numpy as np
import pytest
import tensorflow.compat.v1 as tf
from helpers import classifier_model_fn, dataset_input_fn, make_estimator

import keras_estimator as estimator


def checkpoint_steps(model_dir):
    state = tf.train.get_checkpoint_state(str(model_dir))
    return [int(p.rsplit("-", 1)[1]) for p in state.all_model_checkpoint_paths]


def test_layout_names_and_cadence(tmp_path, toy_data):
    x, y = toy_data
    config = estimator.RunConfig(
        model_dir=str(tmp_path), save_checkpoints_steps=10, keep_checkpoint_max=3
    )
    est = estimator.Estimator(classifier_model_fn, config=config, params={})
    est.train(dataset_input_fn(x, y, 16, repeat=True), steps=25)
    # a checkpoint when training starts fresh, every 10 steps, and at the end; newest 3 kept
    assert checkpoint_steps(tmp_path) == [10, 20, 25]
    files = set(os.listdir(tmp_path))
    assert "checkpoint" in files
    assert {"model.ckpt-25.index", "model.ckpt-25.data-00000-of-00001"} <= files
    assert not [f for f in files if f.startswith("model.ckpt-0.")]  # garbage-collected
    names = dict(tf.train.list_variables(str(tmp_path)))
    assert names["global_step"] == []
    assert names["dense/kernel"] == [8, 16]
    assert {
        "dense/kernel/Adam",
        "dense/kernel/Adam_1",
        "beta1_power",
        "beta2_power",
        "dense_1/bias",
    } <= set(names)
    assert tf.train.load_variable(str(tmp_path), "global_step") == 25
    # retention continues across train() calls; the cadence counts from the last save
    est.train(dataset_input_fn(x, y, 16, repeat=True), steps=10)
    assert checkpoint_steps(tmp_path) == [20, 25, 35]


def test_time_based_checkpoints_default(tmp_path, toy_data):
    x, y = toy_data
    est = make_estimator(tmp_path)
    est.train(dataset_input_fn(x, y, 16, repeat=True), steps=30)
    # 600 s default: only the first and the final checkpoints of a short run
    assert checkpoint_steps(tmp_path) == [0, 30]


def test_new_estimator_resumes_from_latest_checkpoint(tmp_path, toy_data):
    x, y = toy_data
    first = make_estimator(tmp_path)
    first.train(dataset_input_fn(x, y, 16, repeat=True), steps=40)
    result = first.evaluate(dataset_input_fn(x, y, 64))
    kernel = first.get_variable_value("dense/kernel")
    second = make_estimator(tmp_path)
    assert second.evaluate(dataset_input_fn(x, y, 64)) == pytest.approx(result)
    second.train(dataset_input_fn(x, y, 16, repeat=True), steps=1)
    assert second.get_variable_value("global_step") == 41
    assert not np.allclose(second.get_variable_value("dense/kernel"), kernel)


def test_evaluate_an_older_checkpoint_path(tmp_path, toy_data):
    x, y = toy_data
    config = estimator.RunConfig(model_dir=str(tmp_path), save_checkpoints_steps=5)
    est = estimator.Estimator(classifier_model_fn, config=config, params={})
    est.train(dataset_input_fn(x, y, 16, repeat=True), steps=10)
    old = est.evaluate(dataset_input_fn(x, y, 64), checkpoint_path=str(tmp_path / "model.ckpt-5"))
    assert old["global_step"] == 5
    assert est.evaluate(dataset_input_fn(x, y, 64))["global_step"] == 10


def test_seed_makes_runs_repeatable(tmp_path, toy_data):
    x, y = toy_data

    def run(name, seed):
        config = estimator.RunConfig(model_dir=str(tmp_path / name), tf_random_seed=seed)
        est = estimator.Estimator(classifier_model_fn, config=config, params={})
        est.train(dataset_input_fn(x, y, 16, repeat=True, shuffle=True), steps=20)
        return est.get_variable_value("dense/kernel"), est.evaluate(dataset_input_fn(x, y, 64))[
            "loss"
        ]

    kernel_a, loss_a = run("a", 7)
    kernel_b, loss_b = run("b", 7)
    kernel_c, _ = run("c", 8)
    np.testing.assert_array_equal(kernel_a, kernel_b)
    assert loss_a == loss_b
    assert not np.allclose(kernel_a, kernel_c)


def test_seeded_estimator_made_later_in_the_process_starts_where_the_first_did(tmp_path, toy_data):
    """Between them, calls that create no variables draw nothing eagerly (they keep TF's
    compiled kernels); the later Estimator's initializers still start at the seed."""
    x, y = toy_data

    def model_fn(features, labels, mode):  # no dropout: its step's kernels keep no state
        logits = tf.layers.dense(features["x"], 3)
        loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
        train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, tf.train.get_global_step())
        return estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

    def estimator_in(name):
        config = estimator.RunConfig(model_dir=str(tmp_path / name), tf_random_seed=7)
        return estimator.Estimator(model_fn, config=config)

    first = estimator_in("a")
    first.train(dataset_input_fn(x, y, 16, repeat=True), steps=1)
    kernel = first.get_variable_value("dense/kernel")
    first.train(dataset_input_fn(x, y, 16, repeat=True), steps=1)
    first.train(dataset_input_fn(x, y, 16, repeat=True), steps=1)
    later = estimator_in("b")
    later.train(dataset_input_fn(x, y, 16, repeat=True), steps=1)
    np.testing.assert_array_equal(later.get_variable_value("dense/kernel"), kernel)


def test_checkpoint_of_a_different_model_names_the_variables(tmp_path, toy_data):
    x, y = toy_data
    est = make_estimator(tmp_path, params={"hidden": 16})
    est.train(dataset_input_fn(x, y, 16, repeat=True), steps=3)
    before = sorted(os.listdir(tmp_path))

    wider = make_estimator(tmp_path, params={"hidden": 32})
    with pytest.raises(
        ValueError,
        match=r"dense/kernel: checkpoint has float32\[8, 16\], model_fn creates float32\[8, 32\]",
    ):
        wider.train(dataset_input_fn(x, y, 16, repeat=True), steps=3)

    def other_model_fn(features, labels, mode):
        w = tf.get_variable("other/w", [8, 3])
        logits = tf.matmul(features["x"], w)
        loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
        return estimator.EstimatorSpec(
            mode, loss=loss, train_op=tf.train.GradientDescentOptimizer(0.1).minimize(loss)
        )

    other = estimator.Estimator(other_model_fn, model_dir=str(tmp_path))
    with pytest.raises(ValueError, match=r"not in the checkpoint: \['other/w'\]"):
        other.evaluate(dataset_input_fn(x, y, 64))
    assert sorted(os.listdir(tmp_path)) == before  # nothing written
    est.train(dataset_input_fn(x, y, 16, repeat=True), steps=2)  # still resumable
    assert est.get_variable_value("global_step") == 5


def test_resumes_a_model_dir_written_by_a_tf1_graph_mode_saver(tmp_path, toy_data):
    """A checkpoint made the way tf.estimator made it (graph mode, tf.train.Saver)."""
    x, y = toy_data
    with tf.Graph().as_default():
        global_step = tf.train.create_global_step()
        features = {"x": tf.constant(x)}
        spec = classifier_model_fn(features, tf.constant(y), estimator.ModeKeys.TRAIN, {"lr": 0.05})
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(30):
                sess.run(spec.train_op)
            assert sess.run(global_step) == 30
            tf.train.Saver().save(sess, str(tmp_path / "model.ckpt"), global_step=30)
            kernel_var = [v for v in tf.global_variables() if v.op.name == "dense/kernel"][0]
            kernel = sess.run(kernel_var)
    est = make_estimator(tmp_path)
    result = est.evaluate(dataset_input_fn(x, y, 64))
    assert result["global_step"] == 30
    assert result["accuracy"] > 0.6
    # the values were restored by name into the engine's variables
    np.testing.assert_array_equal(est.keras_model._store.variables["dense/kernel"].numpy(), kernel)
    est.train(dataset_input_fn(x, y, 16, repeat=True), steps=5)
    assert est.get_variable_value("global_step") == 35


def test_cadence_after_resume_counts_from_the_last_save(tmp_path, toy_data):
    x, y = toy_data
    config = estimator.RunConfig(
        model_dir=str(tmp_path), save_checkpoints_steps=5, keep_checkpoint_max=None
    )
    est = estimator.Estimator(classifier_model_fn, config=config, params={})
    est.train(dataset_input_fn(x, y, 16, repeat=True), steps=7)
    est.train(dataset_input_fn(x, y, 16, repeat=True), steps=10)
    # as tf.estimator's timer: 0, 5, 7 (end), then 7 + 5 = 12, 17 (end); None keeps all
    saved = sorted(
        int(f.split("-")[1].split(".")[0]) for f in os.listdir(tmp_path) if f.endswith(".index")
    )
    assert saved == [0, 5, 7, 12, 17]


def test_no_checkpoints_when_both_save_settings_are_none(tmp_path, toy_data):
    x, y = toy_data
    config = estimator.RunConfig(
        model_dir=str(tmp_path), save_checkpoints_steps=None, save_checkpoints_secs=None
    )
    est = estimator.Estimator(classifier_model_fn, config=config, params={})
    est.train(dataset_input_fn(x, y, 16, repeat=True), steps=5)
    assert tf.train.latest_checkpoint(str(tmp_path)) is None


def test_evaluate_restores_only_what_the_eval_step_uses(tmp_path, toy_data):
    """A checkpoint without optimizer slots evaluates, even after training in-process."""
    x, y = toy_data
    est = make_estimator(tmp_path / "a")
    est.train(dataset_input_fn(x, y, 16, repeat=True), steps=3)
    slim_dir = tmp_path / "slim"
    slim_dir.mkdir()
    store = est.keras_model._store
    keep = {k: v for k, v in store.variables.items() if "Adam" not in k and "power" not in k}
    tf.train.Saver(var_list=keep).save(None, str(slim_dir / "model.ckpt"), global_step=3)
    result = est.evaluate(
        dataset_input_fn(x, y, 64), checkpoint_path=str(slim_dir / "model.ckpt-3")
    )
    assert result["global_step"] == 3


def test_mismatch_error_is_a_not_found_error_like_tf_estimator(tmp_path, toy_data):
    x, y = toy_data
    est = make_estimator(tmp_path, params={"hidden": 4})
    est.train(dataset_input_fn(x, y, 16, repeat=True), steps=1)
    other = make_estimator(tmp_path, params={"hidden": 5})
    with pytest.raises(tf.errors.NotFoundError):
        other.evaluate(dataset_input_fn(x, y, 64))


def test_seed_leaves_numpy_and_python_random_alone(tmp_path, toy_data):
    import random

    x, y = toy_data
    config = estimator.RunConfig(model_dir=str(tmp_path), tf_random_seed=3)
    est = estimator.Estimator(classifier_model_fn, config=config, params={})
    np.random.seed(123)
    random.seed(123)
    est.evaluate(dataset_input_fn(x, y, 64))
    first = (np.random.rand(), random.random())
    est.evaluate(dataset_input_fn(x, y, 64))
    second = (np.random.rand(), random.random())
    assert first != second  # the user's streams go on; they are not re-seeded per call


def test_relative_model_dir_resumes(tmp_path, toy_data, monkeypatch):
    monkeypatch.chdir(tmp_path)
    x, y = toy_data
    est = make_estimator("relative/run")
    est.train(dataset_input_fn(x, y, 16, repeat=True), steps=2)
    assert est.latest_checkpoint() == os.path.join("relative", "run", "model.ckpt-2")
    est.train(dataset_input_fn(x, y, 16, repeat=True), steps=2)
    assert est.get_variable_value("global_step") == 4
    assert est.evaluate(dataset_input_fn(x, y, 64))["global_step"] == 4
