"""The compiled loops around the traced step: the first steps of a call run from Python until
the loop is traced, the rest in the compiled loop, and every count and value is the same
wherever the input ends (inside the first steps, at their edge, or in the compiled loop)."""

import numpy as np
import pytest
import tensorflow as tf2
import tensorflow.compat.v1 as tf
from helpers import NoiseFetcher, dataset_input_fn, make_estimator, noise_recording_model_fn

import keras_estimator as estimator
from keras_estimator.engine.loops import (
    EVAL_STEPS_BEFORE_TRACING,
    TRAIN_STEPS_BEFORE_TRACING,
    has_kernel_state,
)


def mean_model_fn(features, labels, mode, params):
    """Loss = the batch's mean of x; eval metric: the mean over every example evaluated."""
    w = tf.get_variable("w", [], initializer=tf.zeros_initializer())
    x = features["x"]
    loss = tf.reduce_mean(x) + 0.0 * w
    if mode == estimator.ModeKeys.EVAL:
        metrics = {"mean_x": tf.metrics.mean(x)}
        return estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops=metrics)
    step = tf.train.get_global_step()
    return estimator.EstimatorSpec(mode, loss=loss, train_op=tf.assign_add(step, 1))


# Around the first batches an evaluation runs from Python (128) and past them in the loop.
@pytest.mark.parametrize("batches", [1, 127, 128, 129, 200])
def test_evaluate_counts_every_batch_wherever_the_input_ends(tmp_path, batches):
    x = np.arange(batches * 4, dtype=np.float32)
    est = make_estimator(tmp_path, mean_model_fn)
    est.train(dataset_input_fn(x, batch_size=4, repeat=True), steps=1)
    metrics = est.evaluate(dataset_input_fn(x, batch_size=4))
    assert metrics["mean_x"] == pytest.approx(float(x.mean()))
    again = est.evaluate(dataset_input_fn(x, batch_size=4))  # the loop, traced or not, reused
    assert again["mean_x"] == pytest.approx(float(x.mean()))
    assert est.evaluate(dataset_input_fn(x, batch_size=4), steps=batches - 1 or 1)["mean_x"] == (
        pytest.approx(float(x[: 4 * max(batches - 1, 1)].mean()))
    )


@pytest.mark.parametrize("examples", [4 * 20, 4 * 32, 4 * 50])
def test_training_until_the_input_ends_counts_every_step(tmp_path, examples):
    """Steps run from Python, then in the compiled loop; the input ends in either."""
    x = np.ones(examples, dtype=np.float32)
    est = make_estimator(tmp_path, mean_model_fn, log_step_count_steps=1000)
    est.train(dataset_input_fn(x, batch_size=4))
    assert est.get_variable_value("global_step") == examples // 4
    est.train(dataset_input_fn(x, batch_size=4), steps=examples // 4 + 7)  # ends first
    assert est.get_variable_value("global_step") == 2 * (examples // 4)


def test_an_input_reported_infinite_that_ends_ends_training_there(tmp_path):
    """TF reports a dataset chosen from an endless one infinite even when its selector ends:
    training ends with the input (50 batches, past the steps run from Python), as in 2.15."""
    x = np.ones(4, dtype=np.float32)

    def input_fn():
        endless = tf2.data.Dataset.from_tensor_slices(({"x": x}, x)).repeat()
        chosen = tf2.data.Dataset.choose_from_datasets(
            [endless], tf2.data.Dataset.range(1).repeat(200)
        )
        return chosen.batch(4)

    est = make_estimator(tmp_path, mean_model_fn, log_step_count_steps=1000)
    assert int(input_fn().cardinality()) == tf2.data.INFINITE_CARDINALITY
    est.train(input_fn, steps=1000)
    assert est.get_variable_value("global_step") == 50


def test_a_long_training_run_gives_the_same_weights_as_step_by_step_calls(tmp_path):
    """150 steps in one call (32 from Python, the rest compiled) over a finite input and
    over an endless one (`repeat()`: the loop that takes batches without checking for the
    input's end), and in 150 one-step calls, train exactly as the same SGD in numpy."""

    def sgd_model_fn(features, labels, mode, params):
        w = tf.get_variable("w", [1, 1], initializer=tf.ones_initializer())
        loss = tf.reduce_mean(tf.square(tf.matmul(features["x"], w) - labels))
        train_op = tf.train.GradientDescentOptimizer(0.01).minimize(
            loss, global_step=tf.train.get_global_step())  # fmt: skip
        return estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

    rng = np.random.default_rng(0)
    x = rng.normal(size=(600, 1)).astype(np.float32)
    y = 3 * x
    chunked = make_estimator(tmp_path / "chunked", sgd_model_fn, log_step_count_steps=None)
    chunked.train(dataset_input_fn(x, y, batch_size=4), steps=150)
    endless = make_estimator(tmp_path / "endless", sgd_model_fn, log_step_count_steps=None)
    endless.train(dataset_input_fn(x, y, batch_size=4, repeat=True), steps=150)
    stepped = make_estimator(tmp_path / "stepped", sgd_model_fn)
    for _ in range(150):
        stepped.train(dataset_input_fn(x, y, batch_size=4), steps=1)
    # Each 1-step call restarts the input: the same first batch, 150 times.
    w = 1.0
    for _ in range(150):
        w -= 0.01 * float(np.mean(2 * (x[:4, 0] * w - y[:4, 0]) * x[:4, 0]))
    np.testing.assert_allclose(stepped.get_variable_value("w"), [[w]], rtol=1e-5)
    w = 1.0
    for i in range(150):
        xb, yb = x[4 * i : 4 * i + 4, 0], y[4 * i : 4 * i + 4, 0]
        w -= 0.01 * float(np.mean(2 * (xb * w - yb) * xb))
    np.testing.assert_allclose(chunked.get_variable_value("w"), [[w]], rtol=1e-5)
    np.testing.assert_allclose(endless.get_variable_value("w"), [[w]], rtol=1e-5)


def test_random_numbers_never_repeat_across_steps_and_batches(tmp_path):
    """One random stream per mode, as in TF1's graph: dropout-like draws of step 40 are not
    those of step 8 (two instances of a step, alone and in the loop, would both start at
    the seed); the same for predictions over many batches."""

    def model_fn(features, labels, mode, params):
        draws = tf.get_variable("draws", [80], initializer=tf.zeros_initializer(),
                                trainable=False)  # fmt: skip
        noise = tf.random.uniform(tf.shape(features["x"]))
        if mode == estimator.ModeKeys.PREDICT:
            return estimator.EstimatorSpec(mode, predictions={"noise": noise})
        w = tf.get_variable("w", [], initializer=tf.zeros_initializer())
        loss = tf.reduce_mean(features["x"] * w)
        step = tf.train.get_global_step()
        record = tf.scatter_update(draws, step, noise[0])
        return estimator.EstimatorSpec(mode, loss=loss, train_op=tf.group(
            record, tf.assign_add(step, 1)))  # fmt: skip

    x = np.ones(4 * 80, dtype=np.float32)
    est = make_estimator(tmp_path, model_fn, tf_random_seed=3, log_step_count_steps=1000)
    est.train(dataset_input_fn(x, batch_size=4), steps=80)
    draws = est.get_variable_value("draws")
    assert len(set(draws.tolist())) == 80  # no step drew what another drew
    noise = np.array([p["noise"] for p in est.predict(dataset_input_fn(x, batch_size=4))])
    assert len(set(noise.tolist())) == len(noise) == 320


# Inputs of the two calls: finite, or endless (`repeat()`: the loop without end checks).
@pytest.mark.parametrize("fetch_every, repeats", [
    (3, (False, False)), (1, (False, False)), (3, (True, True)), (3, (False, True)),
])  # fmt: skip
def test_hooks_that_fetch_leave_the_random_stream_as_in_tf1s_graph(tmp_path, fetch_every, repeats):
    """Steps a hook fetches from draw from the same stream as the others (tf.estimator
    2.15: one graph, one stream per call; a seeded call starts it at the seed again)."""

    x = np.ones(100, dtype=np.float32)
    est = make_estimator(tmp_path, noise_recording_model_fn(fetch_every), tf_random_seed=3,
                         log_step_count_steps=1000)  # fmt: skip
    fetchers = [NoiseFetcher(5), NoiseFetcher(5)]
    for fetcher, repeat in zip(fetchers, repeats):
        est.train(dataset_input_fn(x, batch_size=1, repeat=repeat), steps=20, hooks=[fetcher])
    draws = est.get_variable_value("draws")
    first, second = draws[:20].tolist(), draws[20:].tolist()
    assert len(set(first)) == 20  # no step of a call drew what another drew
    assert second == first  # the second call's stream starts at the seed again
    assert fetchers[0].seen == {s: pytest.approx(first[s]) for s in (0, 5, 10, 15)}
    assert fetchers[1].seen == fetchers[0].seen


@pytest.mark.parametrize("logs", [True, False])
def test_calls_of_one_step_draw_what_the_first_step_of_any_call_draws(tmp_path, logs):
    """A call that runs one step (train(steps=1), or max_steps one ahead) runs the step
    without its loop; its draw is the seed's first, as every seeded call's first step, and
    a longer call after it draws on from there (tf.estimator 2.15.1's values)."""

    x = np.ones(100, dtype=np.float32)
    est = make_estimator(tmp_path, noise_recording_model_fn(5 if logs else None),
                         tf_random_seed=3, log_step_count_steps=1000)  # fmt: skip
    for calls in ({"steps": 1}, {"steps": 1}, {"max_steps": 3}, {"steps": 5}):
        est.train(dataset_input_fn(x, batch_size=1), **calls)
    first = 0.12736404
    expected = [first] * 4 + [0.85801578, 0.88987064, 0.51356602, 0.56560802]
    np.testing.assert_allclose(est.get_variable_value("draws")[:8], expected, rtol=1e-6)


def test_random_inputs_made_eagerly_repeat_in_every_seeded_call(tmp_path):
    """An input_fn drawing its data eagerly (an op seed from the global seed, or its own)
    gets the same data in every seeded call, as 2.15's graph per call did; a step without
    random ops keeps its compiled kernels meanwhile."""

    def input_fn():
        x = tf2.random.normal([8, 2])
        y = tf2.random.uniform([8, 2], seed=7)
        return tf2.data.Dataset.from_tensor_slices({"x": x, "y": y}).batch(8)

    def model_fn(features, labels, mode, params):
        w = tf.get_variable("w", [], initializer=tf.zeros_initializer())
        predictions = {"x": features["x"] + w, "y": features["y"]}
        if mode == estimator.ModeKeys.PREDICT:
            return estimator.EstimatorSpec(mode, predictions=predictions)
        loss = tf.reduce_mean(features["x"] * w)
        step = tf.train.get_global_step()
        return estimator.EstimatorSpec(mode, loss=loss, train_op=tf.assign_add(step, 1))

    est = make_estimator(tmp_path, model_fn, tf_random_seed=3)
    runs = []
    for _ in range(3):
        est.train(input_fn, steps=1)
        runs.append([(p["x"].tolist(), p["y"].tolist()) for p in est.predict(input_fn)])
    assert runs[0] == runs[1] == runs[2]
    assert len({tuple(x) for x, _ in runs[0]}) == 8  # the rows differ: a stream, not a constant


def noise_counting_model_fn(features, labels, mode, params):
    """EVAL: metric `distinct` counts the distinct draws of the 20 steps' noise; the model_fn's
    own evaluation hook fetches the loss every params["every"] steps."""
    w = tf.get_variable("w", [], initializer=tf.zeros_initializer())
    noise = tf.identity(tf.random.uniform([1]), name="noise")
    loss = tf.reduce_mean(features["x"] * w)
    if mode == estimator.ModeKeys.TRAIN:
        step = tf.train.get_global_step()
        return estimator.EstimatorSpec(mode, loss=loss, train_op=tf.assign_add(step, 1))
    local = [tf.GraphKeys.LOCAL_VARIABLES]
    draws = tf.get_variable("draws", [20], initializer=tf.zeros_initializer(),
                            trainable=False, collections=local)  # fmt: skip
    count = tf.get_variable("count", [], tf.int32, initializer=tf.zeros_initializer(),
                            trainable=False, collections=local)  # fmt: skip
    with tf.control_dependencies([tf.scatter_update(draws, tf.minimum(count, 19), noise[0])]):
        update = tf.assign_add(count, 1)
    metrics = {"distinct": (tf.size(tf.unique(draws)[0]), update)}
    logging = tf.train.LoggingTensorHook({"loss": loss}, every_n_iter=params["every"])
    return estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops=metrics,
                                   evaluation_hooks=[logging])  # fmt: skip


@pytest.mark.parametrize("fetch_every", [3, 1])
def test_evaluation_hooks_that_fetch_leave_the_random_stream_as_in_tf1s_graph(
    tmp_path, fetch_every
):
    x = np.ones(20, dtype=np.float32)
    est = make_estimator(tmp_path, noise_counting_model_fn, params={"every": fetch_every},
                         tf_random_seed=3)  # fmt: skip
    est.train(dataset_input_fn(x, batch_size=1), steps=1)
    for _ in range(2):  # each seeded evaluate() starts the stream at the seed again
        fetcher = NoiseFetcher(5)
        metrics = est.evaluate(dataset_input_fn(x, batch_size=1), hooks=[fetcher])
        assert metrics["distinct"] == 20
        # What the same model_fn and hooks saw on tf.estimator 2.15.1 (TF 2.15's Philox).
        expected = {0: 0.12736404, 5: 0.75038099, 10: 0.12010670, 15: 0.38818109}
        assert fetcher.seen == {step: pytest.approx(v) for step, v in expected.items()}


def test_steps_keeping_kernel_state_are_told_apart_from_those_that_do_not():
    # Only a step with no kernel state of its own may run as two instances (alone and in
    # the loop): these assumptions are what the parametrizations above cross.
    assert (EVAL_STEPS_BEFORE_TRACING, TRAIN_STEPS_BEFORE_TRACING) == (128, 32)

    def traced(body):
        return (
            tf2.function(body, autograph=False)
            .get_concrete_function(tf2.TensorSpec([4], tf2.float32))
            .graph
        )

    assert not has_kernel_state(traced(lambda x: tf2.nn.relu(x) * 2.0))
    assert has_kernel_state(traced(lambda x: tf2.nn.dropout(x, rate=0.5, seed=1)))
    assert has_kernel_state(traced(lambda x: x + tf2.random.shuffle(x, seed=2)))
    inner = tf2.function(lambda x: tf2.random.uniform([4], seed=3) + x, autograph=False)
    assert has_kernel_state(traced(lambda x: inner(x)))  # inside a function it calls
