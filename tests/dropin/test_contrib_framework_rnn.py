"""tf.contrib.framework and tf.contrib.rnn after install(): variable helpers, global step,
checkpoint readers, and TensorFlow's TF1 RNN cells in graphs and in an Estimator."""

import numpy as np
import pytest
import tensorflow as tf
from helpers import make_estimator

import keras_estimator as estimator
from keras_estimator.dropin.contrib import framework, layers, rnn

v1 = tf.compat.v1
RNG = np.random.default_rng(0)


def test_variable_helpers_select_like_contrib():
    with tf.Graph().as_default():
        step = framework.get_or_create_global_step()
        assert framework.get_or_create_global_step() is step
        assert framework.get_global_step() is step
        with v1.variable_scope("tower"):
            layers.fully_connected(tf.zeros([1, 3]), 2)
            local = v1.get_variable("count", [], collections=[v1.GraphKeys.LOCAL_VARIABLES])
        head = framework.variable("head/weights", [2], initializer=v1.zeros_initializer())
        model = framework.model_variable("head/scale", [1], trainable=False)
        assert framework.get_variables("tower") == v1.global_variables("tower")
        assert [v.op.name for v in framework.get_variables(suffix="weights")] == [
            "tower/fully_connected/weights", "head/weights"]  # fmt: skip
        assert [v.op.name for v in framework.get_variables_by_name("weights")] == [
            "tower/fully_connected/weights", "head/weights"]  # fmt: skip
        assert [v.op.name for v in framework.get_model_variables()] == [
            "tower/fully_connected/weights",
            "tower/fully_connected/biases",
            "head/scale",
        ]
        assert model not in framework.get_trainable_variables()
        assert framework.get_local_variables() == [local]
        assert framework.get_unique_variable("head/weights") is head
        with pytest.raises(ValueError, match="Couldn't find variable"):
            framework.get_unique_variable("nope")
        restore = framework.get_variables_to_restore(exclude=["tower", "global_step"])
        assert [v.op.name for v in restore] == ["head/weights", "head/scale"]
        restore = framework.get_variables_to_restore(include=["tower/fully_connected/b"])
        assert [v.op.name for v in restore] == ["tower/fully_connected/biases"]
    assert framework.nest is tf.nest
    assert framework.init_from_checkpoint is v1.train.init_from_checkpoint


def _lstm_numpy(x, kernel, bias, units, forget_bias=1.0):
    sigmoid = lambda z: 1 / (1 + np.exp(-z))  # noqa: E731
    c = h = np.zeros((x.shape[0], units), "float32")
    for t in range(x.shape[1]):
        i, j, f, o = np.split(np.concatenate([x[:, t], h], 1) @ kernel + bias, 4, axis=1)
        c = c * sigmoid(f + forget_bias) + sigmoid(i) * np.tanh(j)
        h = np.tanh(c) * sigmoid(o)
    return h, c


def test_basic_lstm_cell_under_dynamic_rnn_computes_tf1s_lstm():
    x = RNG.normal(size=(2, 5, 3)).astype("float32")
    with tf.Graph().as_default():
        cell = rnn.BasicLSTMCell(4)
        outputs, state = v1.nn.dynamic_rnn(cell, tf.constant(x), dtype=tf.float32)
        assert isinstance(state, rnn.LSTMStateTuple)
        kernel, bias = v1.global_variables()
        assert (kernel.op.name, bias.op.name) == ("rnn/basic_lstm_cell/kernel",
                                                  "rnn/basic_lstm_cell/bias")  # fmt: skip
        with v1.Session() as session:
            session.run(v1.global_variables_initializer())
            outputs, state, kernel, bias = session.run([outputs, state, kernel, bias])
    h, c = _lstm_numpy(x, kernel, bias, 4)
    np.testing.assert_allclose(state.h, h, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(state.c, c, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(outputs[:, -1], h, rtol=1e-5, atol=1e-6)


def test_the_other_tf1_cells_build_with_tf1_names():
    with tf.Graph().as_default():
        cells = [rnn.LSTMCell(3, use_peepholes=True), rnn.GRUCell(3), rnn.BasicRNNCell(3)]
        stacked = rnn.MultiRNNCell([rnn.DropoutWrapper(cells[0], output_keep_prob=0.9),
                                    rnn.ResidualWrapper(cells[1]), cells[2]])  # fmt: skip
        inputs = [tf.ones([2, 3]) for _ in range(4)]
        outputs, _ = rnn.static_rnn(stacked, inputs, dtype=tf.float32)
        names = [v.op.name for v in v1.global_variables()]
    assert len(outputs) == 4 and outputs[0].shape == (2, 3)
    assert "rnn/multi_rnn_cell/cell_0/lstm_cell/w_f_diag" in names
    assert "rnn/multi_rnn_cell/cell_1/gru_cell/gates/kernel" in names
    assert "rnn/multi_rnn_cell/cell_2/basic_rnn_cell/kernel" in names
    assert rnn.RNNCell and rnn.DeviceWrapper and rnn.static_bidirectional_rnn
    assert rnn.static_state_saving_rnn is v1.nn.static_state_saving_rnn


def _rnn_model_fn(features, labels, mode, params):
    contrib = v1.contrib
    cell = contrib.rnn.MultiRNNCell([
        contrib.rnn.DropoutWrapper(contrib.rnn.BasicLSTMCell(8), output_keep_prob=0.9),
        contrib.rnn.GRUCell(4),
    ])  # fmt: skip
    outputs, _ = v1.nn.dynamic_rnn(cell, features["x"], dtype=tf.float32)
    logits = contrib.layers.fully_connected(outputs[:, -1], 2, activation_fn=None)
    loss = v1.losses.sparse_softmax_cross_entropy(labels, logits)
    step = contrib.framework.get_or_create_global_step()
    train_op = v1.train.AdamOptimizer(0.02).minimize(loss, global_step=step)
    accuracy = contrib.metrics.streaming_accuracy(tf.argmax(logits, 1), labels)
    return estimator.EstimatorSpec(mode, loss=loss, train_op=train_op,
                                   eval_metric_ops={"accuracy": accuracy})  # fmt: skip


def test_tf1_cells_and_framework_train_in_an_estimator_and_read_back(tmp_path):
    x = RNG.normal(size=(64, 5, 3)).astype("float32")
    y = (x[:, :, 0].sum(1) > 0).astype("int32")

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).batch(16)

    estimator.install()
    try:
        est = make_estimator(tmp_path, _rnn_model_fn)
        est.train(lambda: input_fn().repeat(), steps=60)
        result = est.evaluate(input_fn)
        checkpoint = est.latest_checkpoint()
        listed = dict(v1.contrib.framework.list_variables(checkpoint))
        reader = v1.contrib.framework.load_checkpoint(checkpoint)
    finally:
        estimator.uninstall()
    assert listed["rnn/multi_rnn_cell/cell_0/basic_lstm_cell/kernel"] == [11, 32]
    assert listed["rnn/multi_rnn_cell/cell_1/gru_cell/gates/kernel"] == [12, 8]
    assert reader.get_tensor("global_step") == 60
    assert framework.load_variable(checkpoint, "global_step") == 60
    assert result["accuracy"] > 0.75, result
