"""Event files in model_dir (training) and model_dir/eval (evaluation), as tf.estimator wrote."""

import os

import numpy as np
import pytest
import tensorflow.compat.v1 as tf
from helpers import classifier_model_fn, dataset_input_fn, make_estimator

import keras_estimator as estimator


def read_events(directory):
    """{tag: [(step, value), ...]} from every event file in `directory`."""
    found = {}
    for path in tf.io.gfile.glob(os.path.join(directory, "events.*")):
        for event in tf.train.summary_iterator(path):
            for value in event.summary.value:
                number = value.simple_value
                if value.HasField("tensor"):
                    number = tf.make_ndarray(value.tensor)
                found.setdefault(value.tag, []).append((event.step, number))
    return found


def summary_model_fn(features, labels, mode, params):
    spec = classifier_model_fn(features, labels, mode, params)
    if mode == estimator.ModeKeys.TRAIN:
        tf.summary.scalar("v1_loss_times_two", spec.loss * 2.0)  # TF1 summary API
        tf.compat.v2.summary.scalar("v2_constant", 3.0)  # TF2 summary API
        tf.summary.histogram(
            "logits_hist", tf.get_default_graph().get_tensor_by_name("dense_1/BiasAdd:0")
        )
    return spec


def test_training_summaries_every_save_summary_steps(tmp_path, toy_data):
    x, y = toy_data
    config = estimator.RunConfig(
        model_dir=str(tmp_path), save_summary_steps=5, log_step_count_steps=5
    )
    est = estimator.Estimator(summary_model_fn, config=config, params={})
    est.train(dataset_input_fn(x, y, 16, repeat=True), steps=12)
    events = read_events(str(tmp_path))
    # stamped with the global step after the step, as SummarySaverHook: 1, 6, 11
    assert [step for step, _ in events["loss"]] == [1, 6, 11]
    assert [step for step, _ in events["v1_loss_times_two"]] == [1, 6, 11]
    assert [float(v) for _, v in events["v2_constant"]] == [3.0, 3.0, 3.0]
    assert "logits_hist" in events
    for (_, loss), (_, doubled) in zip(events["loss"], events["v1_loss_times_two"]):
        assert float(doubled) == pytest.approx(2 * float(loss), rel=1e-5)
    assert [step for step, _ in events["global_step/sec"]] == [6, 11]
    # a resumed call counts from its own first step, as a fresh SummarySaverHook did
    est.train(dataset_input_fn(x, y, 16, repeat=True), steps=7)
    assert [step for step, _ in read_events(str(tmp_path))["loss"]] == [1, 6, 11, 13, 18]


class SummaryAddingHook(tf.train.SessionRunHook):
    """Adds a TF1 summary of the loss in begin(), as a hook may."""

    def begin(self):
        loss = tf.get_collection(tf.GraphKeys.LOSSES)[-1]
        tf.summary.scalar("loss_from_hook", loss * 2.0)


@pytest.mark.parametrize("from_the_spec", [True, False])
def test_a_summary_a_hook_adds_in_begin_is_written_with_the_others(
    tmp_path, toy_data, from_the_spec
):
    """2.15's SummarySaverHook merged the collection at the first step, after every
    hook's begin(): a summary added there records on the same steps as the model_fn's."""
    x, y = toy_data

    def model_fn(features, labels, mode, params):
        spec = classifier_model_fn(features, labels, mode, params)
        hooks = [SummaryAddingHook()] if from_the_spec else []
        return spec._replace(training_hooks=hooks)

    config = estimator.RunConfig(model_dir=str(tmp_path), save_summary_steps=2)
    est = estimator.Estimator(model_fn, config=config, params={})
    caller_hooks = [] if from_the_spec else [SummaryAddingHook()]
    est.train(dataset_input_fn(x, y, 16, repeat=True), steps=5, hooks=caller_hooks)
    events = read_events(str(tmp_path))
    assert [step for step, _ in events["loss_from_hook"]] == [1, 3, 5]  # 2.15.1: the same
    for (_, loss), (_, doubled) in zip(events["loss"], events["loss_from_hook"]):
        assert float(doubled) == pytest.approx(2 * float(loss), rel=1e-5)


def test_a_later_call_writes_the_summaries_its_own_model_fn_collected(tmp_path, toy_data):
    """The same ops, collected into SUMMARIES by the first call's model_fn and not by the
    second's: the second call writes only what it collected (its step is not the first's)."""
    x, y = toy_data
    calls = []

    def model_fn(features, labels, mode, params):
        calls.append(mode)
        spec = classifier_model_fn(features, labels, mode, params)
        collections = None if len(calls) == 1 else ["not_written"]
        tf.summary.scalar("first_call_only", spec.loss * 3.0, collections=collections)
        return spec._replace(training_hooks=[tf.train.StepCounterHook(every_n_steps=100)])

    config = estimator.RunConfig(model_dir=str(tmp_path), save_summary_steps=1)
    est = estimator.Estimator(model_fn, config=config, params={})
    for _ in range(2):
        est.train(dataset_input_fn(x, y, 16, repeat=True), steps=2)
    events = read_events(str(tmp_path))
    assert [step for step, _ in events["loss"]] == [1, 2, 3, 4]
    assert [step for step, _ in events["first_call_only"]] == [1, 2]


def test_no_summaries_when_save_summary_steps_is_zero(tmp_path, toy_data):
    x, y = toy_data
    config = estimator.RunConfig(model_dir=str(tmp_path), save_summary_steps=0)
    est = estimator.Estimator(summary_model_fn, config=config, params={})
    est.train(dataset_input_fn(x, y, 16, repeat=True), steps=3)
    assert "loss" not in read_events(str(tmp_path))


def test_evaluation_metrics_go_to_the_eval_directory(tmp_path, toy_data):
    x, y = toy_data
    est = make_estimator(tmp_path)
    est.train(dataset_input_fn(x, y, 16, repeat=True), steps=4)
    result = est.evaluate(dataset_input_fn(x, y, 64))
    est.evaluate(dataset_input_fn(x, y, 64), name="holdout")
    events = read_events(str(tmp_path / "eval"))
    assert events["accuracy"] == [(4, pytest.approx(result["accuracy"]))]
    assert events["loss"] == [(4, pytest.approx(result["loss"]))]
    assert "global_step" not in events
    assert "accuracy" in read_events(str(tmp_path / "eval_holdout"))


def test_eval_events_are_tf1_simple_values_and_read_eval_metrics(tmp_path, toy_data):
    x, y = toy_data
    est = make_estimator(tmp_path)
    est.train(dataset_input_fn(x, y, 16, repeat=True), steps=2)
    first = est.evaluate(dataset_input_fn(x, y, 64))
    est.train(dataset_input_fn(x, y, 16, repeat=True), steps=3)
    second = est.evaluate(dataset_input_fn(x, y, 64))
    assert est.eval_dir() == str(tmp_path / "eval")
    metrics = estimator.experimental.read_eval_metrics(est.eval_dir())
    assert list(metrics) == [2, 5]
    assert metrics[2]["accuracy"] == pytest.approx(first["accuracy"])
    assert metrics[5]["loss"] == pytest.approx(second["loss"])


@pytest.mark.parametrize(
    "make_hook, final_step",
    [
        (lambda est: estimator.experimental.stop_if_higher_hook(
            est, "accuracy", -1.0, run_every_secs=None, run_every_steps=1), 2),
        (lambda est: estimator.experimental.stop_if_lower_hook(
            est, "accuracy", -1.0, run_every_secs=None, run_every_steps=1), 50),
        (lambda est: estimator.experimental.stop_if_no_decrease_hook(
            est, "loss", 0, run_every_secs=None, run_every_steps=1), 2),
        (lambda est: estimator.experimental.stop_if_no_increase_hook(
            est, "loss", 10**6, run_every_secs=None, run_every_steps=1), 50),
    ],
)  # fmt: skip
def test_early_stopping_hooks_stop_on_eval_metrics(tmp_path, toy_data, make_hook, final_step):
    x, y = toy_data
    est = make_estimator(tmp_path)
    est.train(dataset_input_fn(x, y, 16, repeat=True), steps=1)
    est.evaluate(dataset_input_fn(x, y, 64))  # one eval result at step 1
    est.train(dataset_input_fn(x, y, 16, repeat=True), steps=49, hooks=[make_hook(est)])
    # a met condition stops after the first step of this call; otherwise all 49 run
    assert est.get_variable_value("global_step") == final_step


def test_make_early_stopping_hook_checks_its_arguments(tmp_path):
    est = make_estimator(tmp_path)
    with pytest.raises(TypeError, match="must have type `tf.estimator.Estimator`"):
        estimator.experimental.make_early_stopping_hook(object(), lambda: True)
    with pytest.raises(ValueError, match="Only one of `run_every_secs` and `run_every_steps`"):
        estimator.experimental.make_early_stopping_hook(est, lambda: True, 1, 1)


def test_tf1_summaries_in_eval_and_predict_raise_no_warning(tmp_path, toy_data):
    import warnings

    def model_fn(features, labels, mode):
        logits = tf.layers.dense(features["x"], 3)
        tf.summary.histogram("logits", logits)
        if mode == estimator.ModeKeys.PREDICT:
            return estimator.EstimatorSpec(mode, predictions={"logits": logits})
        loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
        tf.summary.scalar("my_loss", loss)
        train_op = tf.train.AdamOptimizer(0.01).minimize(loss, tf.train.get_global_step())
        return estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

    x, y = toy_data
    est = estimator.Estimator(model_fn, model_dir=str(tmp_path))
    est.train(dataset_input_fn(x, y), steps=2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.evaluate(dataset_input_fn(x, y))
        next(est.predict(dataset_input_fn(x)))
    assert not [w for w in caught if "summary" in str(w.message)], [str(w.message) for w in caught]


def events_of_8_steps_recording_every_5(model_dir, add_summaries):
    """Trains 8 steps of a model_fn that calls `add_summaries(global_step, w)` (w: a
    variable staying 0) with save_summary_steps=5; the global step reached and the events."""

    def model_fn(features, labels, mode):
        step = tf.train.get_global_step()
        w = tf.get_variable("w", [], initializer=tf.zeros_initializer())
        add_summaries(step, w)
        loss = tf.reduce_mean(features["x"]) * w
        return estimator.EstimatorSpec(mode, loss=loss, train_op=tf.assign_add(step, 1))

    def input_fn():
        return tf.data.Dataset.from_tensors(({"x": np.ones([1], np.float32)}, [0.0])).repeat()

    config = estimator.RunConfig(model_dir=str(model_dir), save_summary_steps=5)
    est = estimator.Estimator(model_fn, config=config)
    est.train(input_fn, steps=8)
    return est.get_variable_value("global_step"), read_events(str(model_dir))


def test_a_v1_summary_op_runs_only_on_the_steps_that_record(tmp_path):
    # TF1 ran a summary op only on the steps its SummarySaverHook fetched it: a histogram
    # of NaNs at an unrecorded step (3; recorded: 1, 6) did not stop training under 2.15.
    def add_summaries(step, w):
        nan_at_3 = tf.where(tf.equal(step, 3), float("nan"), 1.0) * tf.ones([4])
        tf.summary.histogram("nan_at_3", nan_at_3)
        tf.summary.scalar("w_plus_step", w + tf.cast(step, tf.float32))

    reached, events = events_of_8_steps_recording_every_5(tmp_path, add_summaries)
    assert reached == 8
    assert [step for step, _ in events["nan_at_3"]] == [1, 6]
    assert events["w_plus_step"] == [(1, 0.0), (6, 5.0)]  # the step's inputs, as recorded


def test_what_only_a_summary_shows_is_computed_only_on_the_steps_that_record(tmp_path):
    # TF1 ran the ops feeding only a summary when its hook fetched the summary: an index
    # out of range at an unrecorded step (3; recorded: 1, 6) did not stop training under
    # 2.15. What other ops use too (the global step read) is the step's own value.
    def add_summaries(step, w):
        index = tf.where(tf.equal(step, 3), tf.constant(5, tf.int64), step % 2)
        picked = tf.gather(tf.constant([10.0, 20.0]), index)
        tf.summary.scalar("picked_twice", picked * 2.0)
        scaled = tf.constant([0.0, 1.0, 0.0, 2.0]) * tf.cast(step, tf.float32)
        tf.summary.scalar("zeros", tf.math.zero_fraction(scaled))  # a cond inside, made again

    reached, events = events_of_8_steps_recording_every_5(tmp_path, add_summaries)
    assert reached == 8
    assert events["picked_twice"] == [(1, 20.0), (6, 40.0)]
    assert events["zeros"] == [(1, 1.0), (6, 0.5)]


def test_a_summary_of_a_long_chain_of_ops_is_recorded(tmp_path):
    # 600 ops computed only for the summary: made again in the recording branch, the chain
    # is walked without recursion (a recursive walk hit Python's limit near 500 ops).
    def add_summaries(step, w):
        value = tf.cast(step, tf.float32)
        for _ in range(600):
            value = value + 1.0
        tf.summary.scalar("step_plus_600", value)

    reached, events = events_of_8_steps_recording_every_5(tmp_path, add_summaries)
    assert reached == 8
    assert events["step_plus_600"] == [(1, 600.0), (6, 605.0)]
