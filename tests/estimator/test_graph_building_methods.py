"""2.15's graph-building methods for subclasses that run a graph in their own Session
(AdaNet's bookkeeping phase): `_create_and_assert_global_step(graph)` and
`_call_model_fn(features, labels, mode, config)` work in the caller's graph."""

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as estimator

v1 = tf.compat.v1


def _model_fn(features, labels, mode, config):
    w = v1.get_variable("w", [2, 1], initializer=v1.zeros_initializer())
    loss = tf.reduce_mean(tf.square(tf.matmul(features["x"], w)[:, 0] - labels))
    train_op = v1.train.GradientDescentOptimizer(0.1).minimize(loss, v1.train.get_global_step())
    return estimator.EstimatorSpec(mode, loss=loss, train_op=train_op, predictions={
        "seed": tf.constant(config.tf_random_seed or 0)
    })  # fmt: skip


def test_a_subclass_builds_and_runs_the_model_fn_in_its_own_graph(tmp_path):
    est = estimator.Estimator(_model_fn, model_dir=str(tmp_path))
    config = est.config.replace(tf_random_seed=7)
    with tf.Graph().as_default() as graph:
        step = est._create_and_assert_global_step(graph)
        assert step is v1.train.get_global_step(graph) and step.dtype == tf.int64
        features = {"x": tf.constant(np.ones((4, 2), "float32"))}
        spec = est._call_model_fn(features, tf.ones([4]), estimator.ModeKeys.TRAIN, config)
        with v1.Session() as session:
            session.run(v1.global_variables_initializer())
            session.run(spec.train_op)
            assert session.run(step) == 1
            assert session.run(spec.predictions["seed"]) == 7  # the config given, this call
    assert est.config.tf_random_seed is None


def test_a_graph_whose_global_step_is_not_int64_is_refused(tmp_path):
    est = estimator.Estimator(_model_fn, model_dir=str(tmp_path))
    with tf.Graph().as_default() as graph:
        keys = [v1.GraphKeys.GLOBAL_VARIABLES, v1.GraphKeys.GLOBAL_STEP]
        v1.Variable(0, dtype=tf.int32, name="global_step", trainable=False, collections=keys)
        with pytest.raises((ValueError, TypeError), match="int64|global step"):
            est._create_and_assert_global_step(graph)
