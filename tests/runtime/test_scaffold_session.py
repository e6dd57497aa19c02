"""A Scaffold's init_fn runs once, when model_dir has no checkpoint, on a session-like
object on which fine-tuning code works (a Saver's restore, session.run of assignments,
tf-slim's assign_from_checkpoint_fn), and a Scaffold's Saver restores evaluate's and
predict's checkpoint with its own var_list, as tf.estimator 2.15 did."""

import importlib.util

import numpy as np
import pytest
import tensorflow.compat.v1 as tf

import keras_estimator as estimator

X = np.linspace(-1, 1, 16, dtype=np.float32).reshape(8, 2)
Y = X.sum(axis=1, keepdims=True)


def input_fn():
    return tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).batch(4)


@pytest.fixture
def pretrained(tmp_path):
    """A TF1 checkpoint of another model: `backbone/kernel` = 3, `backbone/bias` = 5."""
    path = str(tmp_path / "pretrained" / "model.ckpt")
    with tf.Graph().as_default():
        tf.get_variable("backbone/kernel", initializer=np.full((2, 1), 3.0, np.float32))
        tf.get_variable("backbone/bias", initializer=np.full((1,), 5.0, np.float32))
        with tf.Session() as session:
            session.run(tf.global_variables_initializer())
            tf.train.Saver().save(session, path)
    return path


def fine_tune_model_fn(make_init_fn, calls):
    """A regression model_fn whose Scaffold's init_fn is `make_init_fn(kernel, bias)`."""

    def model_fn(features, labels, mode):
        predictions = tf.layers.dense(features["x"], 1, name="head")
        kernel, bias = (v for v in tf.global_variables() if v.name.startswith("head/"))
        init_fn = make_init_fn(kernel, bias, features)

        def counted(scaffold, session):
            assert isinstance(scaffold, tf.train.Scaffold)
            calls.append(mode)
            init_fn(scaffold, session)

        scaffold = tf.train.Scaffold(init_fn=counted)
        if mode == estimator.ModeKeys.PREDICT:
            return estimator.EstimatorSpec(mode, predictions={"y": predictions}, scaffold=scaffold)
        loss = tf.losses.mean_squared_error(labels, predictions)
        train_op = tf.train.GradientDescentOptimizer(0.0).minimize(  # keeps the start values
            loss, tf.train.get_global_step()
        )
        return estimator.EstimatorSpec(mode, loss=loss, train_op=train_op, scaffold=scaffold)

    return model_fn


def test_saver_restore_in_init_fn_runs_once_when_model_dir_has_no_checkpoint(tmp_path, pretrained):
    def make_init_fn(kernel, bias, features):
        saver = tf.train.Saver({"backbone/kernel": kernel, "backbone/bias": bias})
        return lambda scaffold, session: saver.restore(session, pretrained)

    calls = []
    model_dir = str(tmp_path / "model")
    est = estimator.Estimator(fine_tune_model_fn(make_init_fn, calls), model_dir)
    est.train(input_fn, steps=2)
    assert calls == [estimator.ModeKeys.TRAIN]
    np.testing.assert_array_equal(est.get_variable_value("head/kernel"), [[3.0], [3.0]])
    np.testing.assert_array_equal(est.get_variable_value("head/bias"), [5.0])
    # The step-0 checkpoint written before the first step holds the restored values too.
    first = tf.train.get_checkpoint_state(model_dir).all_model_checkpoint_paths[0]
    assert first.endswith("model.ckpt-0")
    np.testing.assert_array_equal(tf.train.load_variable(first, "head/bias"), [5.0])

    # model_dir has a checkpoint now: neither resuming nor evaluating calls init_fn again.
    est.train(input_fn, steps=1)
    again = estimator.Estimator(fine_tune_model_fn(make_init_fn, calls), model_dir)
    again.evaluate(input_fn)
    assert calls == [estimator.ModeKeys.TRAIN] and again.get_variable_value("global_step") == 3


def test_init_fn_session_runs_assignments_and_reads_variables(tmp_path):
    seen = {}

    def make_init_fn(kernel, bias, features):
        assign_kernel = tf.assign(kernel, tf.fill([2, 1], 7.0))
        assign_bias = tf.group(bias.assign(tf.constant([-1.0]) * 2.0))

        def init_fn(scaffold, session):
            seen["run"] = session.run({"kernel": assign_kernel, "bias": "head/bias:0"})
            seen["group"] = session.run(assign_bias)
            seen["after"] = session.run([bias, None])
            seen["graph"] = session.graph is assign_kernel.op.graph
            seen["globals"] = sorted(v.name for v in tf.global_variables())

        return init_fn

    calls = []
    est = estimator.Estimator(fine_tune_model_fn(make_init_fn, calls), str(tmp_path))
    est.train(input_fn, steps=1)
    np.testing.assert_array_equal(seen["run"]["kernel"], [[7.0], [7.0]])
    assert seen["run"]["bias"].shape == (1,) and seen["group"] is None
    np.testing.assert_array_equal(seen["after"][0], [-2.0])
    assert seen["after"][1] is None and seen["graph"]
    assert seen["globals"] == ["global_step:0", "head/bias:0", "head/kernel:0"]
    np.testing.assert_array_equal(est.get_variable_value("head/kernel"), [[7.0], [7.0]])


@pytest.mark.skipif(importlib.util.find_spec("tf_slim") is None, reason="needs tf-slim")
def test_tf_slim_assign_from_checkpoint_fn(tmp_path, pretrained):
    import tf_slim as slim

    def make_init_fn(kernel, bias, features):
        restore = slim.assign_from_checkpoint_fn(
            pretrained, {"backbone/kernel": kernel, "backbone/bias": bias}
        )
        return lambda scaffold, session: restore(session)

    est = estimator.Estimator(fine_tune_model_fn(make_init_fn, []), str(tmp_path))
    predictions = [p["y"] for p in est.predict(input_fn)]  # no checkpoint: init_fn runs
    np.testing.assert_allclose(np.ravel(predictions), X @ [3.0, 3.0] + 5.0, rtol=1e-6)


def test_what_cannot_run_outside_the_step_says_so(tmp_path):
    def feeding(kernel, bias, features):
        # (A traced graph's tensors are unhashable: a feed_dict is keyed by tensor names.)
        assign = tf.assign(kernel, tf.placeholder(tf.float32, [2, 1], name="value"))
        return lambda scaffold, session: session.run(assign, {"value:0": np.ones([2, 1])})

    est = estimator.Estimator(fine_tune_model_fn(feeding, []), str(tmp_path / "feed"))
    with pytest.raises(NotImplementedError, match=r"session.run\(feed_dict=...\) is not supported"):
        est.train(input_fn, steps=1)

    def from_data(kernel, bias, features):
        assign = tf.assign(kernel, tf.reshape(features["x"][0], [2, 1]))
        return lambda scaffold, session: session.run(assign)

    est = estimator.Estimator(fine_tune_model_fn(from_data, []), str(tmp_path / "data"))
    with pytest.raises(ValueError, match="depend on the step's input"):
        est.train(input_fn, steps=1)


def test_a_scaffold_saver_restores_evaluate_and_predict_with_its_var_list(tmp_path):
    """The moving-average pattern: evaluation's Saver maps each weight to its average."""

    def model_fn(features, labels, mode):
        predictions = tf.layers.dense(features["x"], 1, name="head",
                                      kernel_initializer=tf.zeros_initializer())  # fmt: skip
        if mode == estimator.ModeKeys.TRAIN:
            loss = tf.losses.mean_squared_error(labels, predictions)
            step = tf.train.get_global_step()
            minimize = tf.train.GradientDescentOptimizer(0.1).minimize(loss, step)
            average = tf.train.ExponentialMovingAverage(0.5)
            with tf.control_dependencies([minimize]):
                train_op = average.apply(tf.trainable_variables())
            return estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)
        # What ExponentialMovingAverage.variables_to_restore() gives (it puts TF 2's
        # unhashable variables in a set): each weight read from its average's name.
        average = tf.train.ExponentialMovingAverage(0.5)
        averages = {average.average_name(v): v for v in tf.trainable_variables()}
        scaffold = tf.train.Scaffold(saver=tf.train.Saver(averages))
        if mode == estimator.ModeKeys.PREDICT:
            return estimator.EstimatorSpec(mode, predictions={"y": predictions}, scaffold=scaffold)
        loss = tf.losses.mean_squared_error(labels, predictions)
        return estimator.EstimatorSpec(mode, loss=loss, scaffold=scaffold)

    est = estimator.Estimator(model_fn, str(tmp_path))
    est.train(lambda: input_fn().repeat(), steps=5)
    checkpoint = est.latest_checkpoint()
    kernel = tf.train.load_variable(checkpoint, "head/kernel")
    average = tf.train.load_variable(checkpoint, "head/kernel/ExponentialMovingAverage")
    bias = tf.train.load_variable(checkpoint, "head/bias/ExponentialMovingAverage")
    assert not np.allclose(kernel, average)
    predicted = np.ravel([p["y"] for p in est.predict(input_fn)])
    np.testing.assert_allclose(predicted, (X @ average + bias).ravel(), rtol=1e-5)
    expected_loss = np.mean(((X @ average + bias) - Y) ** 2)
    np.testing.assert_allclose(est.evaluate(input_fn)["loss"], expected_loss, rtol=1e-5)
