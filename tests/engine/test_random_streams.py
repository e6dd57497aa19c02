"""Seeded TF1 random ops of a training step draw as their kernels did, restartable per call."""

import numpy as np
import pytest
import tensorflow as tf2
import tensorflow.compat.v1 as tf
from helpers import NoiseFetcher, dataset_input_fn, make_estimator, noise_recording_model_fn

from keras_estimator.engine.random_streams import RandomStreams, replaced_ops

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


@pytest.mark.parametrize("in_cond", [False, True])
def test_every_seeded_call_draws_the_seeds_stream_from_its_start(tmp_path, in_cond):
    x = np.ones(100, dtype=np.float32)
    est = make_estimator(tmp_path, noise_recording_model_fn(in_cond=in_cond), tf_random_seed=3,
                         log_step_count_steps=1000)  # fmt: skip
    est.train(dataset_input_fn(x, batch_size=1), steps=1)
    est.train(dataset_input_fn(x, batch_size=1), steps=19)
    est.train(dataset_input_fn(x, batch_size=1), steps=20)
    draws = est.get_variable_value("draws").tolist()
    assert len(set(draws[1:20])) == 19  # one stream within a call
    assert draws[0] == draws[1] and draws[20:39] == draws[1:20]  # each call from the seed


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
