"""Keras 3 optimizers in a model_fn, in every form the TF guides and 2.15's canned
estimators wrote them: apply_gradients inside tf.group, minimize(loss, var_list), and
optimizer.iterations set to the global step."""

import keras
import numpy as np
import pytest
import tensorflow as tf
from helpers import dataset_input_fn, make_estimator

import keras_estimator as estimator


def _model_fn(form):
    def model_fn(features, labels, mode, params):
        model = keras.Sequential([keras.layers.Dense(8, activation="relu"), keras.layers.Dense(3)])
        logits = model(features["x"], training=mode == estimator.ModeKeys.TRAIN)
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits))
        if mode != estimator.ModeKeys.TRAIN:
            return estimator.EstimatorSpec(mode, loss=loss)
        optimizer = keras.optimizers.Adam(0.05)
        variables = model.trainable_variables
        if form == "group":  # the TF estimator guide's form
            grads = tf.gradients(loss, variables)
            update_ops = tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.UPDATE_OPS)
            train_op = tf.group(optimizer.apply_gradients(zip(grads, variables)), *update_ops)
        elif form == "minimize":
            train_op = optimizer.minimize(loss, var_list=variables)
        elif form == "minimize_callable":
            train_op = optimizer.minimize(lambda: loss, var_list=lambda: variables)
        else:  # 2.15's canned estimators: the optimizer counts the global step
            optimizer.iterations = tf.compat.v1.train.get_or_create_global_step()
            grads = tf.gradients(loss, variables)
            train_op = optimizer.apply_gradients(zip(grads, variables))
        assert isinstance(train_op, tf.Operation), train_op
        return estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

    return model_fn


@pytest.mark.parametrize("form", ["group", "minimize", "minimize_callable", "iterations_as_step"])
def test_keras_optimizer_forms_train_and_count_steps(tmp_path, toy_data, form):
    x, y = toy_data
    est = make_estimator(tmp_path, _model_fn(form), tf_random_seed=1)
    before = est.train(dataset_input_fn(x, y, 32, repeat=True), steps=1).evaluate(
        dataset_input_fn(x, y, 64))["loss"]  # fmt: skip
    est.train(dataset_input_fn(x, y, 32, repeat=True), steps=40)
    result = est.evaluate(dataset_input_fn(x, y, 64))
    # Each step counts once: the optimizer's own increment of the global step (when it is
    # its `iterations`) is not doubled by the Estimator's.
    assert result["global_step"] == 41
    assert est.get_variable_value("global_step") == 41
    assert result["loss"] < before * 0.8


def test_keras_optimizer_outside_a_model_fn_is_untouched():
    variable = tf.Variable([1.0, 2.0])
    optimizer = keras.optimizers.SGD(0.1)
    result = optimizer.apply_gradients([(tf.constant([1.0, 1.0]), variable)])
    assert result is optimizer.iterations  # Keras 3's own return value, eagerly
    assert not hasattr(optimizer, "minimize")
    np.testing.assert_allclose(variable.numpy(), [0.9, 1.9])
