"""EstimatorSpec.scaffold: what is honoured (Saver retention) and what is only reported."""

import logging

import tensorflow.compat.v1 as tf
from helpers import classifier_model_fn, dataset_input_fn, make_estimator

import keras_estimator as estimator


def with_scaffold(make_scaffold):
    def model_fn(features, labels, mode, params):
        spec = classifier_model_fn(features, labels, mode, params)
        return spec._replace(scaffold=make_scaffold())

    return model_fn


def test_scaffold_saver_retention_is_used_and_builds_no_ops_in_the_step(
    tmp_path, toy_data, monkeypatch
):
    x, y = toy_data
    monkeypatch.chdir(tmp_path)  # a Saver built in the step would restore from "./model"
    model_fn = with_scaffold(lambda: tf.train.Scaffold(saver=tf.train.Saver(max_to_keep=2)))
    config = estimator.RunConfig(model_dir=str(tmp_path / "m"), save_checkpoints_steps=2)
    est = estimator.Estimator(model_fn, config=config, params={})
    est.train(dataset_input_fn(x, y, 32, repeat=True), steps=9)
    state = tf.train.get_checkpoint_state(str(tmp_path / "m"))
    assert [p.rsplit("-", 1)[1] for p in state.all_model_checkpoint_paths] == ["8", "9"]
    assert est.evaluate(dataset_input_fn(x, y, 64))["global_step"] == 9


def test_scaffold_init_op_is_reported_as_not_run(tmp_path, toy_data, caplog):
    """(init_fn runs: tests/runtime/test_scaffold_session.py.)"""
    x, y = toy_data
    init_op = with_scaffold(lambda: tf.train.Scaffold(init_op=tf.no_op()))
    est = make_estimator(tmp_path / "b", init_op)
    with caplog.at_level(logging.WARNING, logger="keras_estimator"):
        est.train(dataset_input_fn(x, y, 32, repeat=True), steps=2)
    assert "init_op: not run by keras_estimator" in caplog.text
    assert est.get_variable_value("global_step") == 2
