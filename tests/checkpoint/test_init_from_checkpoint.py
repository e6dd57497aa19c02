"""init_from_checkpoint inside a model_fn: the pretrain -> fine-tune flow, applied once."""

import numpy as np
import pytest
import tensorflow.compat.v1 as tf
from helpers import dataset_input_fn, make_estimator

import keras_estimator as estimator


def encoder(x):
    with tf.variable_scope("bert"):
        hidden = tf.layers.dense(x, 16, activation=tf.nn.tanh, name="layer_0")
        return tf.layers.dense(hidden, 16, activation=tf.nn.tanh, name="layer_1")


def make_model_fn(head_scope, n_classes, init_checkpoint=None, assignment_map=None):
    def model_fn(features, labels, mode, params):
        encoded = encoder(features["x"])
        if init_checkpoint:
            tf.train.init_from_checkpoint(init_checkpoint, assignment_map)
        with tf.variable_scope(head_scope):
            logits = tf.layers.dense(encoded, n_classes, name="logits")
        if mode == estimator.ModeKeys.PREDICT:
            return estimator.EstimatorSpec(mode, predictions={"logits": logits})
        loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
        if mode == estimator.ModeKeys.EVAL:
            return estimator.EstimatorSpec(mode, loss=loss)
        train_op = tf.train.AdamOptimizer(0.05).minimize(loss, tf.train.get_global_step())
        return estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

    return model_fn


ENCODER = ["bert/layer_0/kernel", "bert/layer_0/bias", "bert/layer_1/kernel", "bert/layer_1/bias"]


@pytest.fixture
def pretrained(tmp_path, toy_data):
    x, y = toy_data
    est = make_estimator(tmp_path / "pre", make_model_fn("cls", 3))
    est.train(dataset_input_fn(x, y, 32, repeat=True), steps=20)
    return est


def test_pretrain_save_init_from_checkpoint_fine_tune(tmp_path, toy_data, pretrained):
    x, y = toy_data
    pre = {name: pretrained.get_variable_value(name) for name in ENCODER}
    fine = estimator.Estimator(
        make_model_fn("output", 2, pretrained.model_dir, {"bert/": "bert/"}),
        model_dir=str(tmp_path / "fine"),
        params={},
    )
    fine.train(dataset_input_fn(x, y % 2, 32, repeat=True), steps=10)
    # Applied before the first step: the checkpoint saved at step 0 holds the pretrained
    # encoder, and a fresh head (not in the pretrained checkpoint).
    step0 = str(tmp_path / "fine" / "model.ckpt-0")
    for name in ENCODER:
        np.testing.assert_array_equal(tf.train.load_variable(step0, name), pre[name])
    assert "output/logits/kernel" in dict(tf.train.list_variables(step0))
    # Applied once, not on every step: training moved the encoder away from the checkpoint.
    for name in ENCODER:
        assert not np.allclose(fine.get_variable_value(name), pre[name])
    moved = fine.get_variable_value("bert/layer_0/kernel")
    # A second train() resumes from model_dir and does not re-apply the pretrained values.
    fine.train(dataset_input_fn(x, y % 2, 32, repeat=True), steps=5)
    assert fine.get_variable_value("global_step") == 15
    resumed = fine.get_variable_value("bert/layer_0/kernel")
    assert not np.allclose(resumed, pre["bert/layer_0/kernel"])
    assert not np.array_equal(resumed, moved)  # it kept training from where it was


def test_one_to_one_map_and_evaluate_before_training(tmp_path, toy_data, pretrained):
    x, y = toy_data
    mapping = {
        "bert/layer_0/kernel": "bert/layer_0/kernel",
        "bert/layer_0/bias": "bert/layer_0/bias",
    }
    fine = estimator.Estimator(
        make_model_fn("output", 2, pretrained.latest_checkpoint(), mapping),
        model_dir=str(tmp_path / "fine"),
        params={},
    )
    fine.train(dataset_input_fn(x, y % 2, 32, repeat=True), steps=1, hooks=[])
    step0 = str(tmp_path / "fine" / "model.ckpt-0")
    np.testing.assert_array_equal(
        tf.train.load_variable(step0, "bert/layer_0/kernel"),
        pretrained.get_variable_value("bert/layer_0/kernel"),
    )
    assert not np.array_equal(
        tf.train.load_variable(step0, "bert/layer_1/kernel"),
        pretrained.get_variable_value("bert/layer_1/kernel"),
    )


def test_assignment_map_errors_name_the_tensor_and_leave_model_dir_empty(
    tmp_path, toy_data, pretrained
):
    x, y = toy_data
    for mapping, message in (
        ({"encoder/": "bert/"}, "Tensor encoder/layer_0/bias .* is not found"),
        ({"bert/layer_0/kernel": "bert/layer_1/kernel"}, "Shape of variable bert/layer_1/kernel"),
    ):
        model_dir = tmp_path / f"bad{len(message)}"
        bad = estimator.Estimator(
            make_model_fn("output", 2, pretrained.model_dir, mapping),
            model_dir=str(model_dir),
            params={},
        )
        with pytest.raises(ValueError, match=message):
            bad.train(dataset_input_fn(x, y % 2, 32, repeat=True), steps=1)
        assert not model_dir.exists() or not list(model_dir.glob("*.index"))
