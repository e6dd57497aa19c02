"""TensorFlow's `assign_moving_average(zero_debias=True)` in a model_fn (AdaNet's ensembles):
it names its variables after the engine's, reading `.op.name` of variables made outside the
step; the checkpoint holds 2.15.1's names (avg, avg/biased, avg/local_step)."""

import numpy as np
import tensorflow.compat.v1 as tf
from tensorflow.python.training import moving_averages

import keras_estimator as estimator
from keras_estimator.seam.internals import variable_ops_in_traces


def _model_fn(features, labels, mode):
    w = tf.get_variable("w", [2, 1])
    loss = tf.reduce_mean(tf.square(tf.matmul(features["x"], w)[:, 0] - labels))
    avg = tf.get_variable("avg", [], initializer=tf.zeros_initializer(), trainable=False)
    update = moving_averages.assign_moving_average(avg, loss, 0.9, zero_debias=True)
    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, tf.train.get_global_step())
    return estimator.EstimatorSpec(mode, loss=loss, train_op=tf.group(train_op, update))


def test_a_zero_debiased_moving_average_trains_with_2_15s_variable_names(tmp_path):
    x = np.ones((8, 2), "float32")
    est = estimator.Estimator(_model_fn, model_dir=str(tmp_path))
    est.train(lambda: tf.data.Dataset.from_tensor_slices(({"x": x}, x[:, 0])).batch(4), steps=2)
    assert sorted(est.get_variable_names()) == [
        "avg", "avg/biased", "avg/local_step", "global_step", "w"
    ]  # fmt: skip
    assert est.get_variable_value("avg/local_step") == 2


def test_only_moving_averages_read_a_stand_in_op():
    variable = tf.Variable(1.0, name="v")

    @tf.function
    def trace():
        with variable_ops_in_traces():
            try:
                variable.op  # noqa: B018 - any other reader still gets TensorFlow's error
            except AttributeError:
                return tf.constant(True)
        return tf.constant(False)

    assert bool(trace())
