"""Errors that teach (issue 29): the commonest model_fn / input_fn mistakes keep their error
and traceback, plus a note naming the mode, what the model_fn received and the fix."""

import keras
import numpy as np
import pytest
import tensorflow.compat.v1 as tf
from helpers import classifier_model_fn, dataset_input_fn, make_estimator

import keras_estimator as estimator

x = np.random.RandomState(0).rand(32, 3).astype("float32")
y = (x[:, 0] > 0.5).astype("int32")


def notes(excinfo):
    return "\n".join(getattr(excinfo.value, "__notes__", []))


def no_predict_branch(features, labels, mode, params):
    logits = tf.layers.dense(features["x"], 2)
    loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
    train_op = tf.train.AdamOptimizer().minimize(loss, tf.train.get_global_step())
    return estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def features_only():
    return tf.data.Dataset.from_tensor_slices({"x": x}).batch(8)


def test_predict_with_a_model_fn_without_a_predict_branch(tmp_path):
    est = make_estimator(str(tmp_path), no_predict_branch)
    est.train(dataset_input_fn(x, y), steps=1)
    with pytest.raises(ValueError, match="labels") as excinfo:
        list(est.predict(features_only))
    text = notes(excinfo)
    assert "the model_fn failed in mode='infer' (predict()), where labels is None" in text
    assert (
        "when mode == ModeKeys.PREDICT the model_fn returns EstimatorSpec(mode, predictions="
        in text
    )
    assert "Fix: add `if mode == tf.estimator.ModeKeys.PREDICT:" in text
    assert "Received: mode='infer', features={'x': float32[None, 3]}, labels=None" in text


def test_train_with_an_input_fn_without_labels(tmp_path):
    with pytest.raises(ValueError, match="labels") as excinfo:
        make_estimator(str(tmp_path), no_predict_branch).train(features_only, steps=1)
    text = notes(excinfo)
    assert "mode='train' (train()) with labels=None: the input_fn gave features only" in text
    assert "the input_fn returns (features, labels)" in text
    assert "Received: mode='train', features={'x': float32[None, 3]}, labels=None" in text


def test_a_wrong_feature_key_lists_the_keys_there_are(tmp_path):
    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"pixels": x, "age": x[:, 0]}, y)).batch(8)

    with pytest.raises(KeyError, match="'x'") as excinfo:
        make_estimator(str(tmp_path)).train(input_fn, steps=1)
    text = notes(excinfo)
    assert "the model_fn asked for features['x']" in text
    assert "Expected one of the keys there are: ['age', 'pixels']" in text
    assert "Fix: use one of those keys in the model_fn, or name the feature 'x'" in text
    assert (
        "Received: mode='train', features={'pixels': float32[None, 3], 'age': float32[None]}"
        in text
    )


def test_a_key_error_of_params_is_not_blamed_on_the_features(tmp_path):
    def model_fn(features, labels, mode, params):
        return classifier_model_fn(features, labels, mode, {"hidden": params["width"]})

    with pytest.raises(KeyError, match="'width'") as excinfo:
        make_estimator(str(tmp_path), model_fn, params={"lr": 0.1}).train(
            dataset_input_fn(x, y), steps=1)  # fmt: skip
    assert "(if it was params['width']: params has keys ['lr'])" in notes(excinfo)


def _keras_optimizer_model_fn(step):
    def model_fn(features, labels, mode, params):
        logits = tf.layers.dense(features["x"], 2)
        loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
        return estimator.EstimatorSpec(
            mode, loss=loss, train_op=step(keras.optimizers.Adam(), loss)
        )

    return model_fn


@pytest.mark.parametrize(
    "step, given",
    [
        (lambda opt, loss: opt.minimize(loss, global_step=tf.train.get_global_step()),
         "global_step="),
        (lambda opt, loss: opt.minimize(loss, tf.train.get_global_step()),
         "the global step as second argument"),
    ],
    ids=["keyword", "positional"],
)  # fmt: skip
def test_a_keras_optimizers_minimize_called_the_tf1_way(tmp_path, step, given):
    est = make_estimator(str(tmp_path), _keras_optimizer_model_fn(step))
    with pytest.raises(TypeError) as excinfo:
        est.train(dataset_input_fn(x, y), steps=1)
    message = str(excinfo.value)
    assert f"A Keras optimizer's minimize() was called the TF1 way (with {given})" in message
    assert "take minimize(loss, var_list)" in message
    assert "tf.compat.v1.train.AdamOptimizer(...).minimize(loss, global_step=" in message
    assert f"Received: optimizer=Adam, {given}" in message


def test_a_keras_optimizers_compute_gradients(tmp_path):
    def step(optimizer, loss):
        grads = optimizer.compute_gradients(loss)
        return optimizer.apply_gradients(grads, tf.train.get_global_step())

    with pytest.raises(AttributeError, match="compute_gradients") as excinfo:
        make_estimator(str(tmp_path), _keras_optimizer_model_fn(step)).train(
            dataset_input_fn(x, y), steps=1)  # fmt: skip
    text = notes(excinfo)
    assert "`compute_gradients` is the TF1 optimizer API" in text
    assert "this is a Keras optimizer (keras.optimizers.Adam)" in text
    assert "tf.compat.v1.train.AdamOptimizer(...)" in text and "return the optimizer" in text
    assert "Received: optimizer=Adam, mode='train'" in text
