"""TF2-style model_fns: Keras 3 layers, a Keras optimizer as train_op, keras.metrics."""

import keras
import numpy as np
import pytest
import tensorflow as tf
from helpers import dataset_input_fn

import keras_estimator as estimator


def keras_model_fn(features, labels, mode):
    hidden = keras.layers.Dense(16, activation="relu")(features["x"])
    logits = keras.layers.Dense(3)(hidden)
    if mode == estimator.ModeKeys.PREDICT:
        return estimator.EstimatorSpec(mode, predictions={"classes": tf.argmax(logits, 1)})
    loss = tf.reduce_mean(
        keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True)
    )
    if mode == estimator.ModeKeys.EVAL:
        accuracy = keras.metrics.SparseCategoricalAccuracy(name="acc")
        accuracy.update_state(labels, logits)
        return estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops={"accuracy": accuracy})
    # keras_estimator convention: a Keras optimizer as train_op minimises `loss`.
    return estimator.EstimatorSpec(mode, loss=loss, train_op=keras.optimizers.Adam(0.02))


def test_keras_layers_optimizer_and_metrics_train_evaluate_predict(tmp_path, toy_data):
    x, y = toy_data
    est = estimator.Estimator(keras_model_fn, model_dir=str(tmp_path))
    before = est.evaluate(dataset_input_fn(x, y, 64))
    est.train(dataset_input_fn(x, y, 32, repeat=True), steps=150)
    after = est.evaluate(dataset_input_fn(x, y, 100))
    assert after["global_step"] == 150
    assert after["loss"] < before["loss"]
    assert after["accuracy"] > 0.9
    preds = np.array([p["classes"] for p in est.predict(dataset_input_fn(x, batch_size=100))])
    # The Keras metric saw every batch, the last partial one included.
    assert after["accuracy"] == pytest.approx(np.mean(preds == y), abs=1e-6)
    again = est.evaluate(dataset_input_fn(x, y, 100))
    assert again["accuracy"] == pytest.approx(after["accuracy"])  # reset, not accumulated


def test_keras_layers_are_reused_across_traces_and_modes(tmp_path, toy_data):
    x, y = toy_data
    est = estimator.Estimator(keras_model_fn, model_dir=str(tmp_path))
    est.train(dataset_input_fn(x, y, 32, repeat=True), steps=3)
    store = est.keras_model._store
    kernels = sorted(k for k in store.variables if k.endswith("kernel"))
    assert len(kernels) == 2  # one per Dense layer, not one per trace or per mode
    est.evaluate(dataset_input_fn(x, y, 64))
    list(est.predict(dataset_input_fn(x[:4], batch_size=4)))
    assert sorted(k for k in store.variables if k.endswith("kernel")) == kernels
    names = est.get_variable_names()
    assert set(kernels) <= set(names)
    assert not [n for n in names if n.startswith("acc")]  # Keras metric state is not saved
    # The checkpoint holds the trained values of the Keras layers.
    np.testing.assert_allclose(
        est.get_variable_value(kernels[0]), store.variables[kernels[0]].numpy()
    )


def test_keras_model_resumes_from_checkpoint_in_a_new_estimator(tmp_path, toy_data):
    x, y = toy_data
    first = estimator.Estimator(keras_model_fn, model_dir=str(tmp_path))
    first.train(dataset_input_fn(x, y, 32, repeat=True), steps=100)
    result = first.evaluate(dataset_input_fn(x, y, 64))
    second = estimator.Estimator(keras_model_fn, model_dir=str(tmp_path))
    assert second.evaluate(dataset_input_fn(x, y, 64)) == pytest.approx(result)
    second.train(dataset_input_fn(x, y, 32, repeat=True), steps=10)
    assert second.get_variable_value("global_step") == 110


def test_tf2_variables_and_gradient_tape_free_style(tmp_path):
    """tf.Variable inside a model_fn with a v1 optimizer, names from name scopes."""

    def model_fn(features, labels, mode):
        with tf.name_scope("linear"):
            w = tf.Variable(lambda: tf.ones([2, 1]), name="w")
        loss = tf.reduce_mean(tf.matmul(features["x"], w))
        opt = tf.compat.v1.train.GradientDescentOptimizer(0.5)
        train_op = opt.minimize(loss, global_step=tf.compat.v1.train.get_global_step())
        return estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

    x = np.ones((8, 2), np.float32)
    est = estimator.Estimator(model_fn, model_dir=str(tmp_path))
    est.train(dataset_input_fn(x, np.zeros(8, np.float32), 4, repeat=True), steps=2)
    np.testing.assert_allclose(est.get_variable_value("linear/w"), [[0.0], [0.0]])


def test_keras_metric_created_outside_the_model_fn_is_reset_per_evaluate(tmp_path, toy_data):
    x, y = toy_data
    total = keras.metrics.Sum(name="examples")

    def model_fn(features, labels, mode):
        w = tf.compat.v1.get_variable("w", [], initializer=tf.compat.v1.zeros_initializer())
        total.update_state(tf.ones_like(features["x"][:, 0]))
        return estimator.EstimatorSpec(mode, loss=w + 1.0, eval_metric_ops={"examples": total})

    est = estimator.Estimator(model_fn, model_dir=str(tmp_path))
    assert est.evaluate(dataset_input_fn(x, y, 64))["examples"] == len(x)
    assert est.evaluate(dataset_input_fn(x, y, 64))["examples"] == len(x)
