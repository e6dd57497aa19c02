"""TF1 initializer ops built in a model_fn (`Scaffold.default_local_init_op()`,
`local_variables_initializer()`, AdaNet's scaffold): the engine's variables are initialised
by the engine, so the ops group only the initializers of variables made in the step."""

import numpy as np
import tensorflow.compat.v1 as tf

import keras_estimator as estimator
from keras_estimator.seam.internals import initializers_of_traced_variables_only


def _model_fn(features, labels, mode):
    w = tf.get_variable("w", [2, 1])
    predictions = tf.matmul(features["x"], w)[:, 0]
    loss = tf.reduce_mean(tf.square(predictions - labels))
    mean = tf.metrics.mean(predictions)  # local variables
    local_init = tf.group(tf.train.Scaffold.default_local_init_op(), tf.tables_initializer())
    scaffold = tf.train.Scaffold(
        local_init_op=local_init, init_op=tf.global_variables_initializer()
    )
    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, tf.train.get_global_step())
    return estimator.EstimatorSpec(
        mode, loss=loss, train_op=train_op, eval_metric_ops={"mean": mean}, scaffold=scaffold
    )


def test_a_model_fn_building_initializer_ops_trains_and_evaluates(tmp_path):
    x = np.ones((8, 2), "float32")
    est = estimator.Estimator(_model_fn, model_dir=str(tmp_path))

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": x}, x[:, 0])).batch(4)

    w_before = None
    est.train(input_fn, steps=1)
    w_before = est.get_variable_value("w")
    est.train(input_fn, steps=1)  # restored, not initialised again by the scaffold's ops
    metrics = est.evaluate(input_fn)
    assert metrics["global_step"] == 2
    w = est.get_variable_value("w")
    assert not np.allclose(w, w_before)
    np.testing.assert_allclose(metrics["mean"], float(np.sum(w)), rtol=1e-5)


def test_only_initializers_of_variables_made_in_the_graph_are_grouped():
    made_eagerly = tf.Variable(1.0, name="made_eagerly")

    @tf.function
    def step():
        with initializers_of_traced_variables_only():
            tf.variables_initializer([made_eagerly])  # TensorFlow's own: a None initializer
        return tf.constant(0)

    step()
    with tf.Graph().as_default():
        in_graph = tf.Variable(2.0, name="in_graph")
        with initializers_of_traced_variables_only():
            init = tf.variables_initializer([in_graph])
        assert in_graph.initializer in init.control_inputs


def test_tables_made_eagerly_before_leave_nothing_for_a_steps_tables_initializer(tmp_path):
    # TensorFlow files an eagerly made table's initializer as None in the eager default
    # graph's TABLE_INITIALIZERS, which every traced graph inherits; 2.15's graph per call
    # held only that call's tables.
    table = tf.lookup.StaticHashTable(
        tf.lookup.KeyValueTensorInitializer(["a"], [1], tf.string, tf.int64), -1
    )
    assert None in tf.get_collection(tf.GraphKeys.TABLE_INITIALIZERS)
    x = np.ones((8, 2), "float32")
    est = estimator.Estimator(_model_fn, model_dir=str(tmp_path))
    est.train(lambda: tf.data.Dataset.from_tensor_slices(({"x": x}, x[:, 0])).batch(4), steps=1)
    assert est.get_variable_value("global_step") == 1
    assert int(table.lookup(tf.constant("a"))) == 1
