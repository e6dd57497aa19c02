"""A later call's trace of the same step is compared once made (`StepIdentity`) and, when
equal, dropped: its hooks run on the earlier trace's compiled loop (`Trace.adopt`)."""

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as estimator
from keras_estimator.runtime.traces import StepIdentity

v1 = tf.compat.v1


def test_two_traces_of_one_computation_are_the_same_step_and_others_are_not():
    w = tf.Variable(2.0, name="w")
    other = tf.Variable(2.0, name="other")
    variables = {"w": w, "other": other}

    def double():
        return w * 2.0

    def triple():
        return w * 3.0

    def double_other():
        return other * 2.0

    first = tf.function(double).get_concrete_function()
    again = tf.function(double).get_concrete_function()
    assert StepIdentity(first.graph, variables, first.outputs) == StepIdentity(
        again.graph, variables, again.outputs
    )
    for fn in (triple, double_other):
        concrete = tf.function(fn).get_concrete_function()
        assert StepIdentity(first.graph, variables, first.outputs) != StepIdentity(
            concrete.graph, variables, concrete.outputs
        )


def _model_fn(features, labels, mode):
    w = v1.get_variable("w", [2, 1])
    loss = tf.reduce_mean(tf.square(tf.matmul(features["x"], w)[:, 0] - labels))
    train_op = v1.train.GradientDescentOptimizer(0.1).minimize(loss, v1.train.get_global_step())
    hook = v1.train.LoggingTensorHook({"loss": loss}, every_n_iter=1)
    return estimator.EstimatorSpec(mode, loss=loss, train_op=train_op, training_hooks=[hook])


def test_a_model_fn_carrying_hooks_is_called_each_call_and_its_hooks_run_on_one_loop(tmp_path):
    calls = []

    def model_fn(features, labels, mode):
        calls.append(mode)
        return _model_fn(features, labels, mode)

    x = np.ones((8, 2), "float32")
    est = estimator.Estimator(model_fn, model_dir=str(tmp_path))

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": x}, x[:, 0])).batch(4).repeat()

    est.train(input_fn, steps=3)
    (first,) = [t.loop for t in est._runtime._trained.traces._traces.values()]
    est.train(input_fn, steps=3)
    (second,) = [t.loop for t in est._runtime._trained.traces._traces.values()]
    assert calls == ["train", "train"]  # 2.15 called the model_fn once per call
    assert second is first  # the second trace was the same step: adopted, not compiled
    assert est.get_variable_value("global_step") == 6


def test_the_prepared_model_is_the_one_a_call_built_and_none_is_given_before(tmp_path):
    x = np.ones((8, 2), "float32")
    est = estimator.Estimator(_model_fn, model_dir=str(tmp_path))
    with pytest.raises(RuntimeError, match="No model has been built for mode 'train'"):
        est._runtime.prepared_model()

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": x}, x[:, 0])).batch(4).repeat()

    est.train(input_fn, steps=2)
    assert est._runtime.prepared_model() is est._runtime.model
    assert est._runtime.prepared_model(estimator.ModeKeys.EVAL) is est._runtime.model
    assert est._runtime.global_step_value() == 2
