"""Distributed training that holds: train_and_evaluate, evaluate and TPUEstimator(use_tpu=False)
under RunConfig(train_distribute=MirroredStrategy) on two logical CPUs (see conftest.py)."""

import math
import os

import numpy as np
import tensorflow as tf2
import tensorflow.compat.v1 as tf
from helpers import dataset_input_fn, make_estimator, mirrored_strategy

import keras_estimator as estimator
from keras_estimator import tpu


def _data():
    rng = np.random.RandomState(1)
    x = rng.randn(64, 4).astype(np.float32)
    y = (x @ np.array([1.0, -2.0, 0.5, 3.0], np.float32) + 0.3).astype(np.float32)
    return x, y


def legacy_model_fn(features, labels, mode, params):
    """Legacy style: the optimizer, its train_op and the metrics are built in every mode."""
    predictions = tf.layers.dense(features["x"], 1, name="linear")[:, 0]
    if mode == estimator.ModeKeys.PREDICT:
        return estimator.EstimatorSpec(mode, predictions={"y": predictions})
    loss = tf.reduce_mean(tf.square(predictions - labels))
    optimizer = (
        tf.train.AdamOptimizer(0.05) if params["adam"] else tf.train.GradientDescentOptimizer(0.1)
    )
    train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())
    mae = tf.metrics.mean_absolute_error(labels, predictions)
    tf.summary.scalar("train_mae", mae[1])
    return estimator.EstimatorSpec(mode, loss=loss, train_op=train_op, eval_metric_ops={"mae": mae})


def eval_only_metrics_model_fn(features, labels, mode, params):
    """tf.estimator's documented style: metrics in EVAL only, train_op in TRAIN only."""
    predictions = tf.layers.dense(features["x"], 1, name="linear")[:, 0]
    if mode == estimator.ModeKeys.PREDICT:
        return estimator.EstimatorSpec(mode, predictions={"y": predictions})
    loss = tf.reduce_mean(tf.square(predictions - labels))
    if mode == estimator.ModeKeys.EVAL:
        return estimator.EstimatorSpec(
            mode,
            loss=loss,
            eval_metric_ops={"mae": tf.metrics.mean_absolute_error(labels, predictions)},
        )
    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(
        loss, global_step=tf.train.get_global_step()
    )
    return estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def test_train_and_evaluate_under_mirrored_evaluates_during_training(tmp_path):
    x, y = _data()
    est = make_estimator(
        tmp_path / "model",
        eval_only_metrics_model_fn,
        train_distribute=mirrored_strategy(),
        save_checkpoints_steps=3,
        tf_random_seed=7,
    )
    serving = estimator.export.build_raw_serving_input_receiver_fn(
        {"x": tf2.TensorSpec([None, 4], tf2.float32)}
    )
    train_spec = estimator.TrainSpec(dataset_input_fn(x, y, 8, repeat=True), max_steps=9)
    eval_spec = estimator.EvalSpec(
        dataset_input_fn(x, y, 16),
        steps=None,
        throttle_secs=0,
        exporters=[estimator.LatestExporter("latest", serving)],
    )
    result, exports = estimator.train_and_evaluate(est, train_spec, eval_spec)

    assert est.get_variable_value("global_step") == 9
    assert result["global_step"] == 9
    # The listener evaluated at each checkpoint during training, not only at the end.
    evaluations = est.history.evaluations
    assert sorted(evaluations) == [3, 6, 9]
    for metrics in evaluations.values():
        assert all(math.isfinite(float(metrics[k])) for k in ("loss", "mae"))
    assert evaluations[9]["loss"] < evaluations[3]["loss"]
    # The exporter ran from the listener too, and its SavedModel serves.
    assert len(exports) == 1 and os.path.isdir(exports[0])
    served = tf2.saved_model.load(exports[0]).signatures["serving_default"](x=tf2.constant(x[:2]))
    assert served["y"].shape == (2,)

    # The evaluation from inside training equals a plain evaluation of the final checkpoint.
    plain = make_estimator(tmp_path / "model", eval_only_metrics_model_fn)
    again = plain.evaluate(dataset_input_fn(x, y, 16))
    np.testing.assert_allclose(result["mae"], again["mae"], rtol=1e-5)
    np.testing.assert_allclose(result["loss"], again["loss"], rtol=1e-5)


def test_model_fn_building_its_train_op_in_every_mode_evaluates_under_train_distribute(tmp_path):
    x, y = _data()
    for adam in (False, True):  # a v1 optimizer without and with slot variables
        model_dir = tmp_path / f"adam_{adam}"
        est = make_estimator(
            model_dir,
            legacy_model_fn,
            params={"adam": adam},
            train_distribute=mirrored_strategy(),
            tf_random_seed=7,
        )
        est.train(dataset_input_fn(x, y, 8, repeat=True), steps=4)
        got = est.evaluate(dataset_input_fn(x, y, 16))
        assert got["global_step"] == 4  # the train_op built in EVAL did not run
        assert est.get_variable_value("global_step") == 4
        plain = make_estimator(model_dir, legacy_model_fn, params={"adam": adam})
        want = plain.evaluate(dataset_input_fn(x, y, 16))
        for key in ("mae", "loss"):
            assert math.isfinite(float(got[key]))
            np.testing.assert_allclose(got[key], want[key], rtol=1e-5)
        # Training goes on after the evaluation (TRAIN's metrics stay per replica).
        est.train(dataset_input_fn(x, y, 8, repeat=True), steps=2)
        assert est.get_variable_value("global_step") == 6
        assert len(list(est.predict(dataset_input_fn(x[:5], batch_size=4)))) == 5


def test_tpu_estimator_without_tpu_trains_and_evaluates_under_train_distribute(tmp_path):
    x, y = _data()
    contexts = []

    def model_fn(features, labels, mode, params):
        predictions = tf.layers.dense(features["x"], 1, name="linear")[:, 0]
        loss = tf.reduce_mean(tf.square(predictions - labels))
        if mode == estimator.ModeKeys.EVAL:

            def metric_fn(labels, predictions):
                return {"mae": tf.metrics.mean_absolute_error(labels, predictions)}

            return tpu.TPUEstimatorSpec(
                mode, loss=loss, eval_metrics=(metric_fn, [labels, predictions])
            )
        optimizer = tf.train.GradientDescentOptimizer(0.1)
        train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())
        return tpu.TPUEstimatorSpec(mode, loss=loss, train_op=train_op)

    def input_fn(params, input_context=None):
        contexts.append(input_context is not None and input_context.num_replicas_in_sync)
        dataset = tf.data.Dataset.from_tensor_slices(({"x": x}, y)).repeat()
        return dataset.batch(params["batch_size"], drop_remainder=True)

    config = tpu.RunConfig(
        model_dir=str(tmp_path), train_distribute=mirrored_strategy(), tf_random_seed=7
    )
    est = tpu.TPUEstimator(
        model_fn, config=config, use_tpu=False, train_batch_size=16, eval_batch_size=16
    )
    est.train(input_fn, max_steps=6)
    assert est.get_variable_value("global_step") == 6
    got = est.evaluate(input_fn, steps=4)
    assert got["global_step"] == 6
    assert math.isfinite(float(got["mae"])) and math.isfinite(float(got["loss"]))
    assert 2 in contexts  # training's input_fn saw the strategy's input context

    # train_and_evaluate with an evaluation during training, under the same strategy.
    config = config.replace(model_dir=str(tmp_path / "tae"), save_checkpoints_steps=2)
    est = tpu.TPUEstimator(
        model_fn, config=config, use_tpu=False, train_batch_size=16, eval_batch_size=16
    )
    result, _ = estimator.train_and_evaluate(
        est,
        estimator.TrainSpec(input_fn, max_steps=4),
        estimator.EvalSpec(input_fn, steps=2, throttle_secs=0),
    )
    assert result["global_step"] == 4
    assert sorted(est.history.evaluations) == [2, 4]
    assert all(math.isfinite(float(m["mae"])) for m in est.history.evaluations.values())


def test_train_and_evaluate_under_one_device_strategy_evaluates_and_exports(tmp_path):
    x, y = _data()
    est = make_estimator(
        tmp_path / "model",
        eval_only_metrics_model_fn,
        train_distribute=tf2.distribute.OneDeviceStrategy("/cpu:1"),
        save_checkpoints_steps=4,
        tf_random_seed=7,
    )
    serving = estimator.export.build_raw_serving_input_receiver_fn(
        {"x": tf2.TensorSpec([None, 4], tf2.float32)}
    )
    result, exports = estimator.train_and_evaluate(
        est,
        estimator.TrainSpec(dataset_input_fn(x, y, 16, repeat=True), max_steps=8),
        estimator.EvalSpec(
            dataset_input_fn(x, y, 16),
            throttle_secs=0,
            exporters=[estimator.LatestExporter("latest", serving)],
        ),
    )
    assert result["global_step"] == 8
    assert sorted(est.history.evaluations) == [4, 8]
    assert len(exports) == 1 and os.path.isdir(exports[0])
    # The same weights as training without a strategy.
    plain = make_estimator(tmp_path / "plain", eval_only_metrics_model_fn, tf_random_seed=7)
    plain.train(dataset_input_fn(x, y, 16, repeat=True), max_steps=8)
    np.testing.assert_allclose(
        est.get_variable_value("linear/kernel"),
        plain.get_variable_value("linear/kernel"),
        rtol=1e-6,
    )
    np.testing.assert_allclose(
        result["mae"], plain.evaluate(dataset_input_fn(x, y, 16))["mae"], rtol=1e-6
    )


def test_in_memory_evaluator_hook_under_mirrored_and_eval_distribute(tmp_path):
    x, y = _data()
    strategy = mirrored_strategy()
    est = make_estimator(
        tmp_path / "model",
        legacy_model_fn,
        params={"adam": True},
        train_distribute=strategy,
        eval_distribute=strategy,
        tf_random_seed=7,
    )
    hook = estimator.experimental.InMemoryEvaluatorHook(
        est, dataset_input_fn(x, y, 16), every_n_iter=3
    )
    est.train(dataset_input_fn(x, y, 8, repeat=True), max_steps=6, hooks=[hook])
    assert est.get_variable_value("global_step") == 6
    # Before training, every 3 iterations and at the end (6 evaluated once).
    assert sorted(est.history.evaluations) == [0, 3, 6]
    final = est.history.evaluations[6]
    want = make_estimator(tmp_path / "model", legacy_model_fn, params={"adam": True}).evaluate(
        dataset_input_fn(x, y, 16)
    )
    np.testing.assert_allclose(final["mae"], want["mae"], rtol=1e-5)
    np.testing.assert_allclose(final["loss"], want["loss"], rtol=1e-5)
