"""Hooks given variables, as TF1 code gave them: `LoggingTensorHook({"step":
tf.train.get_global_step(), "w": w})` and a hook fetching a variable in before_run see the
value the step started from, as tf.estimator 2.15.1 logged them (checked in its venv:
step = 0, 1, 2 and w = 0, 0.5, 0.75 for the model below)."""

import logging

import numpy as np
import tensorflow.compat.v1 as tf

import keras_estimator as estimator
from keras_estimator.seam.internals import hook_tensors_accepting_variables


def _input_fn():
    x = np.ones((64, 1), "float32")
    return tf.data.Dataset.from_tensor_slices(({"x": x}, x[:, 0])).repeat().batch(8)


class VariableFetcher(tf.train.SessionRunHook):
    """Fetches the global step and `w` by object in before_run; keeps what after_run saw."""

    def __init__(self):
        self.seen = []

    def begin(self):
        self._fetches = {"step": tf.train.get_global_step(), "w": tf.trainable_variables()[0]}

    def before_run(self, run_context):
        return tf.train.SessionRunArgs(self._fetches)

    def after_run(self, run_context, run_values):
        self.seen.append((int(run_values.results["step"]), float(run_values.results["w"][0, 0])))


def _model_fn(features, labels, mode, params):
    w = tf.get_variable("w", [1, 1], initializer=tf.zeros_initializer())
    loss = tf.losses.mean_squared_error(labels, tf.matmul(features["x"], w)[:, 0])
    step = tf.train.get_global_step()
    train_op = tf.train.GradientDescentOptimizer(0.25).minimize(loss, step)
    hooks = [tf.train.LoggingTensorHook({"step": step, "w": w}, every_n_iter=1)]
    return estimator.EstimatorSpec(mode, loss=loss, train_op=train_op, training_hooks=hooks)


def test_variables_in_hooks_are_read_as_the_step_starts(tmp_path, caplog):
    fetcher = VariableFetcher()
    est = estimator.Estimator(_model_fn, model_dir=str(tmp_path))
    with caplog.at_level(logging.INFO):
        est.train(_input_fn, steps=3, hooks=[fetcher])
    logged = [r.getMessage() for r in caplog.records if r.getMessage().startswith("step = ")]
    assert [line.split(" (")[0] for line in logged] == [
        "step = 0, w = [[0.]]",
        "step = 1, w = [[0.5]]",
        "step = 2, w = [[0.75]]",
    ]
    assert fetcher.seen == [(0, 0.0), (1, 0.5), (2, 0.75)]
    fetcher.seen.clear()
    est.train(_input_fn, steps=2, hooks=[fetcher])  # a later call, on the same trace
    assert fetcher.seen == [(3, 0.875), (4, 0.9375)]


def test_hook_tensors_accepting_variables_lets_a_tf_hook_begin_on_a_variable():
    variable = tf.Variable(3.0)
    hook = tf.train.LoggingTensorHook({"v": variable}, every_n_iter=1)

    @tf.function
    def trace():
        with hook_tensors_accepting_variables():
            hook.begin()
        return tf.constant(0)

    trace()
    assert hook._current_tensors == {"v": variable}


def test_a_logging_hook_given_a_list_of_tensors_in_the_model_fn_logs_them(tmp_path, caplog):
    def model_fn(features, labels, mode):
        w = tf.get_variable("w", [1, 1], initializer=tf.zeros_initializer())
        loss = tf.losses.mean_squared_error(labels, tf.matmul(features["x"], w)[:, 0])
        doubled = tf.identity(loss * 2, name="doubled")
        train_op = tf.train.GradientDescentOptimizer(0.25).minimize(
            loss, tf.train.get_global_step()
        )
        hook = tf.train.LoggingTensorHook([loss, doubled], every_n_iter=1)  # tensors as tags
        return estimator.EstimatorSpec(mode, loss=loss, train_op=train_op, training_hooks=[hook])

    with caplog.at_level(logging.INFO):
        estimator.Estimator(model_fn, model_dir=str(tmp_path)).train(_input_fn, steps=2)
    lines = [r.getMessage() for r in caplog.records if "doubled:0" in r.getMessage()]
    assert len(lines) == 2 and "Tensor(" in lines[0] and " = 2.0" in lines[0]
