"""`tf.compat.v1.nn.rnn_cell` under install() (TF 2.21's own raises "not available with
Keras 3"): TensorFlow's TF1 cells with tf.estimator 2.15's variable names, so a model_dir
2.15 wrote evaluates to its numbers and resumes; `tf.nn.rnn_cell` in a TF1-mode script."""

import json
import os
import sys

import numpy as np
import pytest
import tensorflow as tf
from helpers import FIXTURES, run_python

import keras_estimator as estimator

FIXTURE = os.path.join(FIXTURES, "rnn_cells_tf_estimator_2_15")
sys.path.insert(0, FIXTURE)
from rnn_model import STEPS, input_fns, make_model_fn  # noqa: E402

v1 = tf.compat.v1


def test_unavailable_without_install_and_served_with_it():
    with pytest.raises(AttributeError, match="not available with Keras 3"):
        v1.nn.rnn_cell.GRUCell  # noqa: B018
    estimator.install()
    try:
        assert v1.nn.rnn_cell.GRUCell is v1.contrib.rnn.GRUCell
        assert sorted(dir(v1.nn.rnn_cell)) == sorted(v1.contrib.rnn.TF1_CELLS)
        with pytest.raises(AttributeError, match="has no attribute 'LayerNormBasicLSTMCell'"):
            v1.nn.rnn_cell.LayerNormBasicLSTMCell  # noqa: B018
    finally:
        estimator.uninstall()
    with pytest.raises(AttributeError, match="not available with Keras 3"):
        v1.nn.rnn_cell.GRUCell  # noqa: B018


def test_a_2_15_model_dir_evaluates_predicts_and_resumes(tmp_path, installed):
    with open(os.path.join(FIXTURE, "expected.json")) as f:
        expected = json.load(f)
    model_dir = tmp_path / "model"
    model_dir.mkdir()
    for name in os.listdir(os.path.join(FIXTURE, "model_dir")):
        (model_dir / name).write_bytes(open(os.path.join(FIXTURE, "model_dir", name), "rb").read())
    train, evaluate, predict = input_fns(v1)
    est = v1.estimator.Estimator(make_model_fn(v1), str(model_dir))
    metrics = est.evaluate(evaluate)
    assert metrics["global_step"] == STEPS
    np.testing.assert_allclose(metrics["accuracy"], expected["metrics"]["accuracy"], rtol=1e-6)
    np.testing.assert_allclose(metrics["loss"], expected["metrics"]["loss"], rtol=1e-4)
    logits = np.array([p["logits"] for p in est.predict(predict)])
    np.testing.assert_allclose(logits, expected["logits"], rtol=1e-4, atol=1e-5)

    est.train(train, steps=3)
    written = dict(tf.train.list_variables(est.latest_checkpoint()))
    assert written == expected["variables"] | {"global_step": []}  # the same names and shapes
    assert "rnn/multi_rnn_cell/cell_1/gru_cell/gates/kernel" in written
    assert est.get_variable_value("global_step") == STEPS + 3


def test_tf_nn_rnn_cell_in_a_tf1_mode_script(tmp_path):
    script = tmp_path / "rnn_script.py"
    script.write_text(
        "import tensorflow as tf\n"
        "tf.logging.set_verbosity(tf.logging.INFO)\n"
        "with tf.Graph().as_default():\n"
        "    cell = tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.BasicLSTMCell(3)])\n"
        "    outputs, _ = tf.nn.dynamic_rnn(cell, tf.ones([2, 4, 5]), dtype=tf.float32)\n"
        "    print('NAMES', [v.op.name for v in tf.global_variables()], outputs.shape)\n"
    )
    result = run_python("-m", "keras_estimator", "run", str(script))
    assert result.returncode == 0, result.stderr[-3000:]
    assert "TF1 mode" in result.stderr
    cell = "rnn/multi_rnn_cell/cell_0/basic_lstm_cell"
    assert f"NAMES ['{cell}/kernel', '{cell}/bias'] (2, 4, 3)" in result.stdout
