"""A compiled Keras model handed to a model_fn written for tf.keras 2: cloned there (with its
compile state: the optimizer's config is read inside the trace), its optimizer rebuilt from
its config and stepped with `get_updates`, `get_updates_for` gathered into the train op,
and `model.metrics` listed as tf.keras 2 listed them."""

import keras
import numpy as np
import pytest
import tensorflow as tf
from helpers import dataset_input_fn, make_estimator

import keras_estimator as estimator


def _compiled_model():
    inputs = keras.Input((8,), name="x")
    hidden = keras.layers.Dense(8, activation="relu")(inputs)
    hidden = keras.layers.BatchNormalization()(hidden)
    model = keras.Model(inputs, keras.layers.Dense(3)(hidden))
    model.compile(
        optimizer=keras.optimizers.Adagrad(learning_rate=0.3),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=[keras.metrics.SparseCategoricalAccuracy(name="acc")],
    )
    return model


def _rebuilt(obj):
    return type(obj).from_config(obj.get_config())


def _tf_keras2_model_fn(model, listed, clone_metrics=True):
    """A model_fn in tf.keras 2's graph-mode idiom over a compiled model made outside."""

    def model_fn(features, labels, mode, params):
        net = keras.models.clone_model(model, clone_function=_rebuilt)
        training = mode == estimator.ModeKeys.TRAIN
        logits = net(features["x"], training=training)
        loss = _rebuilt(model.loss)(labels, logits)
        listed.append([metric.name for metric in model.metrics])
        metrics = [_rebuilt(metric) for metric in model.metrics] if clone_metrics else []
        metrics.append(keras.metrics.SparseCategoricalAccuracy(name="accuracy"))
        for metric in metrics:
            metric.update_state(labels, logits)
        train_op = None
        if training:
            optimizer = _rebuilt(model.optimizer)
            optimizer.iterations = tf.compat.v1.train.get_or_create_global_step()
            updates = net.get_updates_for(None) + net.get_updates_for(features["x"])
            step = optimizer.get_updates(loss=loss, params=net.trainable_variables)[0]
            assert isinstance(step, tf.Operation), step
            train_op = tf.group(step, *updates)
        return estimator.EstimatorSpec(
            mode, loss=loss, train_op=train_op,
            eval_metric_ops={metric.name: metric for metric in metrics},
        )  # fmt: skip

    return model_fn


def test_a_compiled_model_cloned_and_stepped_as_in_tf_keras_2_trains(tmp_path, toy_data):
    x, y = toy_data
    model, listed = _compiled_model(), []
    est = make_estimator(tmp_path, _tf_keras2_model_fn(model, listed), tf_random_seed=1)
    est.train(dataset_input_fn(x, y, 32, repeat=True), steps=1)
    before = est.evaluate(dataset_input_fn(x, y, 64))
    moving_mean = [n for n, _ in tf.train.list_variables(str(tmp_path)) if "moving_mean" in n]
    first_mean = est.get_variable_value(moving_mean[0])
    est.train(dataset_input_fn(x, y, 32, repeat=True), steps=40)
    after = est.evaluate(dataset_input_fn(x, y, 64))
    # The optimizer counts the global step (its iterations): each step counts once.
    assert after["global_step"] == 41
    assert after["loss"] < before["loss"] * 0.8
    assert after["accuracy"] > 0.8
    # Batch normalization's statistics move in the step itself (get_updates_for gives none).
    assert not np.allclose(est.get_variable_value(moving_mean[0]), first_mean)
    # Never fit: tf.keras 2 listed none of compile()'s metrics, so neither is cloned here.
    assert listed and all(names == [] for names in listed)


def test_model_metrics_inside_a_model_fn_are_tf_keras_2s(tmp_path, toy_data):
    x, y = toy_data
    model, listed = _compiled_model(), []
    assert "compile_metrics" in [metric.name for metric in model.metrics]  # Keras 3's own
    model.evaluate(x, y, verbose=0)  # builds compile()'s metrics, as tf.keras 2's first use

    def model_fn(features, labels, mode, params):
        listed.append([metric.name for metric in model.metrics])
        # (tf.keras 2's loss mean, cloned, would not take labels and logits)
        return _tf_keras2_model_fn(model, [], False)(features, labels, mode, params)

    est = make_estimator(tmp_path, model_fn)
    est.train(dataset_input_fn(x, y, 32, repeat=True), steps=2)
    assert listed[0] == ["loss", "acc"]  # the loss mean and the metrics, one by one
    # Outside a model_fn call, Keras 3's list is back.
    assert [metric.name for metric in model.metrics] == ["loss", "compile_metrics"]


def test_get_gradients_requires_a_gradient_for_every_variable(tmp_path, toy_data):
    x, y = toy_data

    def model_fn(features, labels, mode, params):
        used, unused = keras.layers.Dense(3), keras.layers.Dense(3)
        logits = used(features["x"])
        unused(features["x"])
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits))
        variables = used.trainable_variables + unused.trainable_variables
        keras.optimizers.SGD(0.1).get_gradients(loss, variables)
        return estimator.EstimatorSpec(mode, loss=loss)

    with pytest.raises(ValueError, match="no gradient for 2 of the 4 variables"):
        make_estimator(tmp_path, model_fn).train(dataset_input_fn(x, y, 32), steps=1)


def test_keras_models_outside_a_model_fn_are_untouched():
    model = _compiled_model()
    assert not hasattr(model, "get_updates_for")
    assert not hasattr(model.optimizer, "get_updates")
    with pytest.raises(NotImplementedError):
        tf.function(lambda: model.optimizer.get_config())()  # Keras 3's own: not in a trace
