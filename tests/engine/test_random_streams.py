"""Seeded TF1 random ops of a training step draw as their kernels did, restartable per call."""

import gc
import weakref

import numpy as np
import pytest
import tensorflow as tf2
import tensorflow.compat.v1 as tf
from helpers import NoiseFetcher, dataset_input_fn, make_estimator, noise_recording_model_fn

from keras_estimator.engine.random_streams import RandomStreams, replaced_ops
from keras_estimator.experimental import InMemoryEvaluatorHook

# Each TF1 random op a model_fn makes (through tf.random.*, tf.nn.dropout, initializers),
# with the seeds a seeded graph gives it.
DRAWS = {
    "uniform": lambda dtype: tf2.random.uniform([3, 70], seed=5, dtype=dtype),
    "normal": lambda dtype: tf2.random.normal([3, 70], seed=5, dtype=dtype),
    "truncated_normal": lambda dtype: tf2.random.truncated_normal([3, 70], seed=5, dtype=dtype),
    "uniform_int": lambda dtype: tf2.random.uniform(
        [3, 70], -4, 1000, dtype=tf2.int64 if dtype == tf2.float64 else tf2.int32, seed=5
    ),
}


def three_draws(draw, restartable):
    """Three calls of one traced function drawing `draw()`; its streams (if made
    restartable) and the names of the ops it replaced."""
    streams = RandomStreams()

    def body():
        drawn = tf2.identity(draw())
        if restartable:
            streams.make_restartable(tf.get_default_graph())
        return drawn

    tf2.random.set_seed(11)
    fn = tf2.function(body, autograph=False)
    replaced = replaced_ops(fn.get_concrete_function().graph)
    return [fn().numpy() for _ in range(3)], streams, fn, replaced


@pytest.mark.parametrize("dtype", [tf2.float32, tf2.float64, tf2.bfloat16])
@pytest.mark.parametrize("name", sorted(DRAWS))
def test_a_restartable_op_draws_what_its_kernel_drew_and_restarts_at_the_seed(name, dtype):
    kernel_draws, _, _, kept = three_draws(lambda: DRAWS[name](dtype), restartable=False)
    draws, streams, fn, replaced = three_draws(lambda: DRAWS[name](dtype), restartable=True)
    assert kept == frozenset() and len(replaced) == 1
    for ours, kernels in zip(draws, kernel_draws):
        np.testing.assert_array_equal(ours, kernels)  # element for element, call for call
    assert not np.array_equal(draws[0], draws[1])  # a stream, not one draw repeated
    streams.restart()
    np.testing.assert_array_equal(fn().numpy(), kernel_draws[0])
    np.testing.assert_array_equal(fn().numpy(), kernel_draws[1])


def test_unseeded_ops_keep_their_kernels_stream():
    # No seed at all: TF seeds each kernel afresh; there is nothing to restart.
    tf2.random.set_seed(None)
    streams = RandomStreams()

    def body():
        drawn = tf2.identity(tf2.raw_ops.RandomUniform(shape=[4], dtype=tf2.float32))
        streams.make_restartable(tf.get_default_graph())
        return drawn

    graph = tf2.function(body, autograph=False).get_concrete_function().graph
    assert replaced_ops(graph) == frozenset()


# What tf.estimator 2.15.1 drew: uniform noise, tf_random_seed=3 (op seed from the graph).
FIRST_DRAWS_2_15 = [0.12736404, 0.85801578, 0.88987064, 0.51356602, 0.56560802]


@pytest.mark.parametrize("in_cond", [False, True])
def test_every_seeded_call_draws_the_seeds_stream_from_its_start(tmp_path, in_cond):
    # Calls of 45 steps: 32 run the step alone, the rest run in the compiled loop.
    x = np.ones(200, dtype=np.float32)
    model_fn = noise_recording_model_fn(in_cond=in_cond, slots=100)
    est = make_estimator(tmp_path, model_fn, tf_random_seed=3, log_step_count_steps=1000)
    for steps in (1, 45, 45):
        est.train(dataset_input_fn(x, batch_size=1), steps=steps)
    draws = est.get_variable_value("draws").tolist()
    assert len(set(draws[1:46])) == 45  # one stream within a call
    assert draws[0] == draws[1] and draws[46:91] == draws[1:46]  # each call from the seed
    np.testing.assert_allclose(draws[1:6], FIRST_DRAWS_2_15, rtol=1e-6)


def test_op_seeds_restart_in_every_call_without_a_run_config_seed(tmp_path):
    # tf.random.uniform(seed=7) and no tf_random_seed: 2.15's new graph per call drew
    # these three numbers in each call.
    x = np.ones(100, dtype=np.float32)
    est = make_estimator(tmp_path, noise_recording_model_fn(op_seed=7),
                         log_step_count_steps=1000)  # fmt: skip
    for _ in range(2):
        est.train(dataset_input_fn(x, batch_size=1), steps=3)
    draws = est.get_variable_value("draws")[:6]
    np.testing.assert_allclose(draws, [0.48394096, 0.65713012, 0.26520169] * 2, rtol=1e-6)


def test_an_evaluation_inside_train_leaves_trainings_stream_going_on(tmp_path):
    x = np.ones(100, dtype=np.float32)
    est = make_estimator(tmp_path, noise_recording_model_fn(), tf_random_seed=3,
                         log_step_count_steps=1000)  # fmt: skip
    evaluator = InMemoryEvaluatorHook(est, dataset_input_fn(x[:2], batch_size=1), every_n_iter=5)
    est.train(dataset_input_fn(x, batch_size=1), steps=20, hooks=[evaluator])
    draws = est.get_variable_value("draws")[:20].tolist()
    assert len(set(draws)) == 20  # 2.15.1 drew the same 20 with the same evaluations
    np.testing.assert_allclose(draws[:5], FIRST_DRAWS_2_15, rtol=1e-6)
    np.testing.assert_allclose(draws[5:8], [0.75038099, 0.35541725, 0.86975718], rtol=1e-6)


def test_a_retrace_with_other_seeds_draws_from_its_own(tmp_path):
    # The input decides whether a random op comes before the noise: the noise's own op
    # seed (from the graph's op count) differs between the two traces, as in 2.15.
    def model_fn(features, labels, mode, params):
        if "jitter" in features:
            features = {"x": features["x"] + tf.random.uniform([1]) * features["jitter"]}
        return noise_recording_model_fn()(features, labels, mode, params)

    x = np.ones(100, dtype=np.float32)
    est = make_estimator(tmp_path, model_fn, tf_random_seed=3, log_step_count_steps=1000)
    jittered = {"x": x, "jitter": np.zeros_like(x)}

    def input_fn(features):
        return lambda: tf2.data.Dataset.from_tensor_slices(features).batch(1)

    est.train(input_fn(jittered), steps=3)
    est.train(input_fn({"x": x}), steps=3)
    draws = est.get_variable_value("draws")[:6]
    # 2.15.1's draws: the jittered trace's noise, then the other's from its own seeds.
    np.testing.assert_allclose(draws[:3], [0.77806914, 0.25704932, 0.59841776], rtol=1e-6)
    np.testing.assert_allclose(draws[3:], FIRST_DRAWS_2_15[:3], rtol=1e-6)


def test_keras_model_fit_draws_from_its_own_stream(tmp_path):
    # keras_model.fit traces the step itself: it keeps the kernels' stream of its trace, from
    # the seed, whatever the Estimator drew before.
    x = np.ones(100, dtype=np.float32)
    est = make_estimator(tmp_path, noise_recording_model_fn(), tf_random_seed=3,
                         log_step_count_steps=1000)  # fmt: skip
    est.train(dataset_input_fn(x, batch_size=1), steps=4)
    est.keras_model.fit(tf2.data.Dataset.from_tensor_slices({"x": x}).batch(1).take(4), verbose=0)
    draws = est.get_variable_value("draws")[:8]
    np.testing.assert_allclose(draws[4:], draws[:4])


def test_a_traced_graph_with_replaced_ops_is_freed_with_its_function():
    streams = RandomStreams()

    def body():
        drawn = tf2.identity(tf2.random.uniform([3], seed=5))
        streams.make_restartable(tf.get_default_graph())
        return drawn

    fn = tf2.function(body, autograph=False)
    graph = weakref.ref(fn.get_concrete_function().graph)
    assert replaced_ops(graph()) != frozenset()
    del fn
    gc.collect()
    assert graph() is None


def test_a_hook_first_fetching_late_in_a_call_sees_the_draws_the_step_used(tmp_path):
    # The raw draw of the random op itself, first asked for at step 7: the steps before
    # and after it draw from one stream, as in tf.estimator's one graph per call.
    x = np.ones(100, dtype=np.float32)
    est = make_estimator(tmp_path, noise_recording_model_fn(), tf_random_seed=3,
                         log_step_count_steps=1000)  # fmt: skip
    fetcher = NoiseFetcher(1, first=7, name="random_uniform/RandomUniform:0")
    est.train(dataset_input_fn(x, batch_size=1), steps=20, hooks=[fetcher])
    draws = est.get_variable_value("draws")[:20].tolist()
    assert len(set(draws)) == 20
    assert fetcher.seen == {step: pytest.approx(draws[step]) for step in range(7, 20)}
