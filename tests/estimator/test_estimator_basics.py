"""The issue's headline example and tf.estimator's train/evaluate/predict contract."""

import functools
import logging
import os

import numpy as np
import pytest
import tensorflow.compat.v1 as tf
from helpers import classifier_model_fn, dataset_input_fn, make_estimator

import keras_estimator as estimator


def test_headline_example_trains_evaluates_predicts(tmp_path, digits):
    x_train, y_train, x_test, y_test = digits
    est = estimator.Estimator(
        classifier_model_fn,
        model_dir=str(tmp_path),
        params={"lr": 1e-2, "hidden": 64, "n_classes": 10},
    )
    assert (
        est.train(dataset_input_fn(x_train, y_train, 64, repeat=True, shuffle=True), max_steps=600)
        is est
    )
    result = est.evaluate(dataset_input_fn(x_test, y_test, 100))
    assert set(result) == {"accuracy", "loss", "global_step"}
    assert result["global_step"] == 600
    assert result["accuracy"] > 0.9
    predictions = list(est.predict(dataset_input_fn(x_test, batch_size=50)))
    assert len(predictions) == len(x_test)
    assert set(predictions[0]) == {"classes", "probabilities"}
    assert predictions[0]["probabilities"].shape == (10,)
    classes = np.array([p["classes"] for p in predictions])
    assert np.isclose(np.mean(classes == y_test), result["accuracy"], atol=1e-6)


def test_eval_accuracy_matches_numpy_over_all_batches(tmp_path, toy_data):
    """Metric values include the last batch's update (they are read after all updates)."""
    x, y = toy_data
    est = make_estimator(tmp_path)
    est.train(dataset_input_fn(x, y, 32, repeat=True), steps=30)
    # 256 examples in batches of 100: the last, partial batch changes the accuracy.
    result = est.evaluate(dataset_input_fn(x, y, 100))
    preds = np.array([p["classes"] for p in est.predict(dataset_input_fn(x, batch_size=100))])
    assert result["accuracy"] == pytest.approx(np.mean(preds == y), abs=1e-6)


def test_eval_loss_is_mean_of_batch_losses(tmp_path, toy_data):
    x, y = toy_data

    def model_fn(features, labels, mode):
        # A loss that is simply the batch's mean feature: easy to check by hand.
        w = tf.get_variable("w", [], initializer=tf.zeros_initializer())
        loss = tf.reduce_mean(features["x"][:, 0]) + w * 0.0
        train_op = tf.assign_add(tf.train.get_global_step(), 1)
        return estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

    est = estimator.Estimator(model_fn, model_dir=str(tmp_path))
    result = est.evaluate(dataset_input_fn(x, y, 100))
    batch_means = [x[0:100, 0].mean(), x[100:200, 0].mean(), x[200:, 0].mean()]
    assert result["loss"] == pytest.approx(np.mean(batch_means), rel=1e-5)


def test_steps_adds_and_max_steps_is_absolute(tmp_path, toy_data, caplog):
    x, y = toy_data
    est = make_estimator(tmp_path)
    train_fn = dataset_input_fn(x, y, 16, repeat=True)
    est.train(train_fn, steps=7)
    assert est.get_variable_value("global_step") == 7
    est.train(train_fn, steps=5)
    assert est.get_variable_value("global_step") == 12
    est.train(train_fn, max_steps=20)
    assert est.get_variable_value("global_step") == 20
    with caplog.at_level(logging.INFO, logger="keras_estimator"):
        est.train(train_fn, max_steps=15)
    assert "Skipping training since max_steps has already saved" in caplog.text
    assert est.get_variable_value("global_step") == 20


def test_float_step_counts_train_to_their_ceiling_as_2_15_did(tmp_path, toy_data):
    # Found by the corpus (a trainer passes max_steps=examples * 1000 / batch_size).
    x, y = toy_data
    est = make_estimator(tmp_path)
    train_fn = dataset_input_fn(x, y, 16, repeat=True)
    est.train(train_fn, max_steps=3.25)
    assert est.get_variable_value("global_step") == 4
    est.train(train_fn, steps=1.5)
    assert est.get_variable_value("global_step") == 6
    # A whole float (`epochs * len(data) / batch_size`), as cmls-boston-keras passes it.
    est.train(train_fn, max_steps=8.0)
    assert est.get_variable_value("global_step") == 8
    est.train(train_fn, steps=2.0)
    assert est.get_variable_value("global_step") == 10


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"steps": 3, "max_steps": 5}, "Can not provide both steps and max_steps."),
        ({"steps": 0}, "Must specify steps > 0, given: 0"),
        ({"max_steps": 0}, "Must specify max_steps > 0, given: 0"),
        ({"steps": -2}, "Must specify steps > 0, given: -2"),
    ],
)
def test_train_step_arguments_are_validated(tmp_path, toy_data, kwargs, message):
    x, y = toy_data
    est = make_estimator(tmp_path)
    with pytest.raises(ValueError, match=message):
        est.train(dataset_input_fn(x, y, repeat=True), **kwargs)
    assert not os.path.exists(os.path.join(tmp_path, "checkpoint"))


def test_training_stops_when_input_is_exhausted(tmp_path, toy_data):
    x, y = toy_data
    est = make_estimator(tmp_path)
    est.train(dataset_input_fn(x, y, 32), steps=1000)  # 256 / 32 = 8 batches
    assert est.get_variable_value("global_step") == 8
    assert est.latest_checkpoint().endswith("model.ckpt-8")


def test_evaluate_steps_limits_batches_and_metrics_do_not_accumulate(tmp_path, toy_data):
    x, y = toy_data

    def model_fn(features, labels, mode):
        tf.get_variable("w", [], initializer=tf.zeros_initializer())
        loss = tf.constant(1.0)
        count = tf.metrics.mean(tf.ones_like(features["x"][:, 0]))  # counts examples via mean
        total = tf.metrics.true_positives(tf.ones_like(labels), tf.ones_like(labels))
        return estimator.EstimatorSpec(
            mode, loss=loss, eval_metric_ops={"ones": count, "examples": total}
        )

    est = estimator.Estimator(model_fn, model_dir=str(tmp_path))
    first = est.evaluate(dataset_input_fn(x, y, 10), steps=3)
    assert first["examples"] == 30
    second = est.evaluate(dataset_input_fn(x, y, 10), steps=3)
    assert second["examples"] == 30  # reset between calls, not 60
    everything = est.evaluate(dataset_input_fn(x, y, 10))
    assert everything["examples"] == len(x)


def test_reserved_metric_names_raise(tmp_path, toy_data):
    x, y = toy_data

    def model_fn(features, labels, mode, reserved):
        w = tf.get_variable("w", [], initializer=tf.zeros_initializer())
        loss = w * 1.0
        return estimator.EstimatorSpec(
            mode, loss=loss, eval_metric_ops={reserved: tf.metrics.mean(loss)}
        )

    for reserved in ("loss", "global_step"):
        # functools.partial-bound arguments are not model_fn arguments (as in tf.estimator).
        bound = functools.partial(model_fn, reserved=reserved)
        est = estimator.Estimator(bound, model_dir=str(tmp_path / reserved))
        with pytest.raises(ValueError, match=f"Metric with name .{reserved}. is not allowed"):
            est.evaluate(dataset_input_fn(x, y))


def test_predict_is_lazy_and_supports_keys_batches_and_bare_tensors(tmp_path, toy_data):
    x, y = toy_data
    est = make_estimator(tmp_path)
    est.train(dataset_input_fn(x, y, 32, repeat=True), steps=5)

    calls = []

    def counting_input_fn():
        calls.append(1)
        return dataset_input_fn(x, batch_size=64)()

    gen = est.predict(counting_input_fn)
    assert calls == []  # nothing runs until iterated
    first = next(gen)
    assert calls == [1] and set(first) == {"classes", "probabilities"}

    only = next(est.predict(dataset_input_fn(x, batch_size=64), predict_keys=["classes"]))
    assert set(only) == {"classes"}
    with pytest.raises(ValueError, match="Expected to run at least one output"):
        next(est.predict(dataset_input_fn(x, batch_size=64), predict_keys=["nope"]))

    batches = list(est.predict(dataset_input_fn(x, batch_size=100), yield_single_examples=False))
    assert [b["classes"].shape[0] for b in batches] == [100, 100, 56]

    def bare_model_fn(features, labels, mode):
        return estimator.EstimatorSpec(mode, predictions=features["x"][:, 0] * 2.0)

    bare = estimator.Estimator(bare_model_fn, model_dir=str(tmp_path / "bare"))
    values = list(bare.predict(dataset_input_fn(x[:10], batch_size=4)))
    np.testing.assert_allclose(values, x[:10, 0] * 2.0, rtol=1e-6)
    with pytest.raises(ValueError, match="predict_keys argument is not valid"):
        next(bare.predict(dataset_input_fn(x, batch_size=4), predict_keys=["a"]))


def test_evaluate_and_predict_without_checkpoint_use_fresh_variables(tmp_path, toy_data, caplog):
    x, y = toy_data
    est = make_estimator(tmp_path)
    with caplog.at_level(logging.INFO, logger="keras_estimator"):
        result = est.evaluate(dataset_input_fn(x, y))
        predictions = list(est.predict(dataset_input_fn(x[:3])))
    assert "Could not find trained model in model_dir" in caplog.text
    assert "running initialization to evaluate" in caplog.text
    assert "running initialization to predict" in caplog.text
    assert result["global_step"] == 0
    assert len(predictions) == 3
    assert not os.path.exists(os.path.join(tmp_path, "checkpoint"))


def test_properties_and_variable_access(tmp_path, toy_data):
    x, y = toy_data
    params = {"lr": 0.01, "nested": {"a": 1}}
    config = estimator.RunConfig(model_dir=str(tmp_path), tf_random_seed=3)
    est = estimator.Estimator(classifier_model_fn, config=config, params=params)
    params["nested"]["a"] = 2  # params were deep-copied
    assert est.params["nested"]["a"] == 1
    assert est.model_dir == str(tmp_path)
    assert est.config.tf_random_seed == 3
    with pytest.raises(ValueError, match="Could not find trained model in model_dir"):
        est.get_variable_names()
    est.train(dataset_input_fn(x, y, repeat=True), steps=2)
    names = est.get_variable_names()
    assert {"global_step", "dense/kernel", "dense/bias", "dense_1/kernel"} <= set(names)
    assert est.get_variable_value("dense/kernel").shape == (8, 16)
    assert est.latest_checkpoint() == tf.train.latest_checkpoint(str(tmp_path))


def test_temporary_model_dir_is_used_and_logged(caplog):
    with caplog.at_level(logging.WARNING, logger="keras_estimator"):
        est = estimator.Estimator(classifier_model_fn, params={})
    assert os.path.isdir(est.model_dir)
    assert f"Using temporary folder as model directory: {est.model_dir}" in caplog.text


def test_evaluate_on_empty_input_reports_initial_metric_values(tmp_path, toy_data, caplog):
    x, y = toy_data
    est = make_estimator(tmp_path)
    with caplog.at_level(logging.WARNING, logger="keras_estimator"):
        result = est.evaluate(dataset_input_fn(x[:0], y[:0], 10))
    assert "Evaluation ran no step" in caplog.text
    assert result["accuracy"] == 0.0 and result["loss"] == 0.0 and result["global_step"] == 0
