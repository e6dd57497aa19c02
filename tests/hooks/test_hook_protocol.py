"""The SessionRunHook protocol call for call, as tf.estimator 2.15 drove it:
begin -> after_create_session -> (before_run -> after_run) per step -> end, once per call,
for hooks passed in `hooks=` and hooks returned in the EstimatorSpec, in every mode."""

import numpy as np
import tensorflow.compat.v1 as tf
from helpers import dataset_input_fn

import keras_estimator as estimator


class ProtocolHook(tf.train.SessionRunHook):
    """Records every call; fetches the loss tensor (by object or name) on every step."""

    def __init__(self, log, name, fetch=None):
        self.log, self.name, self.fetch = log, name, fetch

    def begin(self):
        self.log.append((self.name, "begin"))

    def after_create_session(self, session, coord):
        self.log.append((self.name, "after_create_session"))

    def before_run(self, run_context):
        self.log.append((self.name, "before_run"))
        return tf.train.SessionRunArgs(self.fetch) if self.fetch is not None else None

    def after_run(self, run_context, run_values):
        self.log.append((self.name, "after_run"))
        if self.fetch is not None:
            assert np.all(np.isfinite(run_values.results))

    def end(self, session):
        self.log.append((self.name, "end"))


def _model_fn_with_spec_hooks(log):
    def model_fn(features, labels, mode):
        logits = tf.layers.dense(features["x"], 3, name="logits")
        spec_hook = ProtocolHook(log, "spec")
        if mode == estimator.ModeKeys.PREDICT:
            spec_hook.fetch = logits
            return estimator.EstimatorSpec(
                mode, predictions={"logits": logits}, prediction_hooks=[spec_hook]
            )
        loss = tf.identity(tf.losses.sparse_softmax_cross_entropy(labels, logits), name="loss_t")
        spec_hook.fetch = loss
        if mode == estimator.ModeKeys.EVAL:
            return estimator.EstimatorSpec(mode, loss=loss, evaluation_hooks=[spec_hook])
        step = tf.train.get_global_step()
        train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, step)
        return estimator.EstimatorSpec(
            mode, loss=loss, train_op=train_op, training_hooks=[spec_hook]
        )

    return model_fn


def _steps(n):
    return [call for _ in range(n) for call in ("before_run", "after_run")]


def _expected(names, steps, input_ends=False):
    """Each hook: begin, after_create_session, its steps, end (hooks interleave per call).

    When the input ends, tf.estimator's session had called every before_run for one more
    step before the input's OutOfRangeError; no after_run follows it.
    """
    expected = [(name, "begin") for name in names]
    expected += [(name, "after_create_session") for name in names]
    for call in _steps(steps) + (["before_run"] if input_ends else []):
        expected += [(name, call) for name in names]
    return expected + [(name, "end") for name in names]


def test_train_evaluate_predict_call_every_hook_exactly_as_tf_estimator(tmp_path, toy_data):
    x, y = toy_data
    log = []
    est = estimator.Estimator(_model_fn_with_spec_hooks(log), model_dir=str(tmp_path))
    train_input = dataset_input_fn(x, y, batch_size=32, repeat=True)

    user = ProtocolHook(log, "user", fetch="loss_t:0")
    est.train(train_input, steps=4, hooks=[user])
    assert log == _expected(["user", "spec"], 4)

    log.clear()
    est.train(train_input, steps=2, hooks=[user])  # the same trace: begin() again, once
    assert log == _expected(["user", "spec"], 2)

    log.clear()
    eval_input = dataset_input_fn(x[:96], y[:96], batch_size=32)
    est.evaluate(eval_input, hooks=[ProtocolHook(log, "user")])
    assert log == _expected(["user", "spec"], 3, input_ends=True)

    log.clear()
    predictions = list(
        est.predict(dataset_input_fn(x[:64], batch_size=32), hooks=[ProtocolHook(log, "user")])
    )
    assert len(predictions) == 64
    assert log == _expected(["user", "spec"], 2, input_ends=True)


def test_a_fetch_asked_for_late_is_served_without_tracing_again(tmp_path, toy_data):
    """A hook that fetches nothing at first and the loss later: no second model_fn trace,
    no extra hook call, and the value is the one the step started from."""
    x, y = toy_data
    traces = []

    def model_fn(features, labels, mode):
        traces.append(mode)
        logits = tf.layers.dense(features["x"], 3)
        loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
        train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, tf.train.get_global_step())
        return estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

    class LateFetchHook(tf.train.SessionRunHook):
        def __init__(self):
            self.calls, self.values = 0, []

        def begin(self):
            self.step = tf.train.get_global_step()

        def before_run(self, run_context):
            self.calls += 1
            return tf.train.SessionRunArgs(self.step) if self.calls >= 3 else None

        def after_run(self, run_context, run_values):
            self.values.append(run_values.results)

    hook = LateFetchHook()
    est = estimator.Estimator(model_fn, model_dir=str(tmp_path))
    est.train(dataset_input_fn(x, y, batch_size=32, repeat=True), steps=5, hooks=[hook])
    assert traces == [estimator.ModeKeys.TRAIN]
    assert hook.calls == 5
    # The value the step started from, as tensorflow-estimator 2.15.1 gave: [None, None, 2, 3, 4].
    assert hook.values == [None, None, 2, 3, 4]


def test_training_until_the_input_ends_calls_hooks_as_tf_estimator(tmp_path, toy_data):
    """3 batches, no steps limit: 3 steps, then the before_run of the step the input's end
    cut off (checked against tensorflow-estimator 2.15: begin, after_create_session,
    (before_run, after_run) x 3, before_run, end)."""
    x, y = toy_data
    log = []
    est = estimator.Estimator(_model_fn_with_spec_hooks(log), model_dir=str(tmp_path))
    est.train(dataset_input_fn(x[:96], y[:96], batch_size=32), hooks=[ProtocolHook(log, "user")])
    assert log == _expected(["user", "spec"], 3, input_ends=True)
    assert est.get_variable_value("global_step") == 3
