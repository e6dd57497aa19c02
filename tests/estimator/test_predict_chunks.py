"""predict() runs unwatched batches several per compiled call: the examples, their order,
the batch boundaries (yield_single_examples=False) and every dtype are those of running
the batches one by one, wherever the input ends."""

import itertools

import numpy as np
import pytest
import tensorflow.compat.v1 as tf
from helpers import dataset_input_fn, make_estimator

import keras_estimator as estimator

W = np.array([[1.0, -2.0], [0.5, 3.0]], dtype=np.float32)


def linear_model_fn(features, labels, mode, params):
    w = tf.get_variable("w", initializer=W)
    logits = tf.matmul(features["x"], w)
    if mode == estimator.ModeKeys.PREDICT:
        return estimator.EstimatorSpec(mode, predictions={
            "logits": logits,
            "classes": tf.argmax(logits, 1),
            "names": tf.strings.as_string(tf.argmax(logits, 1)),
            "big": tf.cast(logits[:, 0] > 0, tf.bool),
        })  # fmt: skip
    loss = tf.reduce_mean(logits)
    return estimator.EstimatorSpec(mode, loss=loss, train_op=tf.assign_add(
        tf.train.get_global_step(), 1))  # fmt: skip


class Watching(tf.train.SessionRunHook):
    """A hook: predict() then runs batch by batch, as tf.estimator did."""


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    est = make_estimator(tmp_path_factory.mktemp("predict_chunks"), linear_model_fn)
    x = np.ones((4, 2), np.float32)
    est.train(dataset_input_fn(x, x[:, 0], batch_size=4), steps=1)
    return est


@pytest.mark.parametrize("examples", [3, 4 * 7, 4 * 7 + 1, 4 * 75 + 3])
def test_chunked_predictions_equal_batch_by_batch_ones(trained, examples):
    x = np.random.default_rng(examples).normal(size=(examples, 2)).astype(np.float32)
    chunked = list(trained.predict(dataset_input_fn(x, batch_size=4)))
    alone = list(trained.predict(dataset_input_fn(x, batch_size=4), hooks=[Watching()]))
    assert len(chunked) == len(alone) == examples
    logits = x @ W
    for got, want, row in zip(chunked, alone, logits):
        assert sorted(got) == ["big", "classes", "logits", "names"]
        np.testing.assert_allclose(got["logits"], row, rtol=1e-6)
        assert got["classes"] == np.argmax(row) == want["classes"]
        assert got["names"] == want["names"] == str(np.argmax(row)).encode()
        assert got["big"] == want["big"] == (row[0] > 0)
        assert got["logits"].dtype == np.float32 and got["big"].dtype == np.bool_


def test_whole_batches_keep_their_boundaries_and_keys(trained):
    x = np.arange(2 * 4 * 20 + 6, dtype=np.float32).reshape(-1, 2)  # 20 batches of 4, then 3
    batches = list(trained.predict(dataset_input_fn(x, batch_size=4), predict_keys="logits",
                                   yield_single_examples=False))  # fmt: skip
    assert [len(b["logits"]) for b in batches] == [4] * 20 + [3]
    assert all(list(b) == ["logits"] for b in batches)
    np.testing.assert_allclose(np.concatenate([b["logits"] for b in batches]), x @ W, rtol=1e-6)


def test_taking_a_few_predictions_of_endless_input_returns(trained):
    x = np.ones((8, 2), np.float32)
    endless = dataset_input_fn(x, batch_size=4, repeat=True)
    first = list(itertools.islice(trained.predict(endless), 200))
    assert len(first) == 200
    np.testing.assert_allclose(first[-1]["logits"], x[0] @ W, rtol=1e-6)
