"""The rewrites keras_estimator asks of tf.data around an input_fn's dataset: parallel
stateless maps and batching, never changing the elements, their order, or what the
input_fn chose itself."""

import threading

import numpy as np
import pytest
import tensorflow as tf
from helpers import run_python

import keras_estimator as estimator
from keras_estimator.runtime.input_pipeline import with_parallel_input


def parsed_records():
    """Serialized examples parsed one by one, as estimator-era TFRecord input_fns did."""
    records = [
        tf.train.Example(features=tf.train.Features(feature={
            "v": tf.train.Feature(int64_list=tf.train.Int64List(value=[i]))})).SerializeToString()
        for i in range(500)
    ]  # fmt: skip

    def parse(record):
        return tf.io.parse_single_example(record, {"v": tf.io.FixedLenFeature([], tf.int64)})["v"]

    return tf.data.Dataset.from_tensor_slices(records).map(parse).shuffle(100, seed=3).batch(7)


def test_elements_and_their_order_are_unchanged():
    tuned = with_parallel_input(parsed_records())
    assert tuned.options().experimental_optimization.map_parallelization is True
    assert tuned.options().experimental_optimization.parallel_batch is True
    got = [b.numpy().tolist() for b in tuned]
    want = [b.numpy().tolist() for b in parsed_records()]
    assert got == want
    assert sorted(sum(got, [])) == list(range(500))


def test_what_the_input_fn_chose_is_kept():
    options = tf.data.Options()
    options.experimental_optimization.map_parallelization = False
    chosen = parsed_records().with_options(options)
    tuned = with_parallel_input(chosen)
    assert tuned.options().experimental_optimization.map_parallelization is False
    assert tuned.options().experimental_optimization.parallel_batch is True
    nondeterministic = tf.data.Options()
    nondeterministic.deterministic = False
    free = parsed_records().with_options(nondeterministic)
    assert with_parallel_input(free) is free
    assert with_parallel_input("not a dataset") == "not a dataset"


def test_an_estimator_sees_the_input_fns_batches_in_order(tmp_path):
    seen = []

    def model_fn(features, labels, mode):
        record = tf.py_function(lambda v: seen.append(v.numpy().tolist()) or 0, [features],
                                tf.int64)  # fmt: skip
        w = tf.Variable(0.0)
        loss = w * tf.cast(record, tf.float32)
        step = tf.compat.v1.train.get_global_step()
        return estimator.EstimatorSpec(mode, loss=loss, train_op=step.assign_add(1))

    est = estimator.Estimator(model_fn, model_dir=str(tmp_path))
    est.train(parsed_records)
    assert seen == [b.numpy().tolist() for b in parsed_records()]
    assert np.sum([len(b) for b in seen]) == 500


def _release_threads() -> list:
    return [t for t in threading.enumerate() if t.name == "keras_estimator-input-release"]


@pytest.mark.parametrize("call", ["train", "evaluate", "predict"])
def test_a_call_returns_before_its_input_is_deleted_and_the_input_is_deleted(tmp_path, call):
    # TF 2.21 can take seconds to delete an iterator (tf.data's autotuning thread misses its
    # wake-up): a call lets its iterator go on a thread of its own. Here the input's deletion
    # waits until the call has returned, so a call that deleted it itself would never return.
    returned, closed = threading.Event(), []

    def endless():
        try:
            while True:
                yield np.ones([4, 2], np.float32), np.zeros([4], np.int64)
        finally:  # runs when tf.data deletes the iterator over it
            closed.append(returned.wait(timeout=30))

    def input_fn():
        spec = (tf.TensorSpec([4, 2], tf.float32), tf.TensorSpec([4], tf.int64))
        data = tf.data.Dataset.from_generator(endless, output_signature=spec)
        return data.map(lambda x, y: ({"x": x}, y))

    def model_fn(features, labels, mode):
        logits = tf.keras.layers.Dense(2)(features["x"])
        if mode == estimator.ModeKeys.PREDICT:
            return estimator.EstimatorSpec(mode, predictions={"logits": logits})
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits))
        step = tf.compat.v1.train.get_global_step()
        return estimator.EstimatorSpec(mode, loss=loss, train_op=step.assign_add(1))

    est = estimator.Estimator(model_fn, model_dir=str(tmp_path))
    batch = ({"x": np.ones([4, 2], np.float32)}, np.zeros([4], np.int64))
    first = tf.data.Dataset.from_tensors(batch)
    est.train(lambda: first, steps=1)  # a checkpoint to evaluate and predict from
    before = set(_release_threads())
    if call == "train":
        est.train(input_fn, steps=3)
    elif call == "evaluate":
        assert est.evaluate(input_fn, steps=2)["global_step"] == 1
    else:
        predictions = est.predict(input_fn)
        assert next(predictions)["logits"].shape == (2,)
        predictions.close()  # the caller stops early: the generator ends, the input goes
    assert closed == []  # the input is still being deleted, and the call has returned
    returned.set()
    for thread in set(_release_threads()) - before:
        thread.join(timeout=60)
    assert closed == [True]


_PREDICTION_LEFT_OPEN = """
import sys
import numpy as np
import tensorflow as tf
import keras_estimator as estimator

def model_fn(features, labels, mode):
    logits = tf.keras.layers.Dense(2)(features["x"])
    return estimator.EstimatorSpec(mode, predictions={"logits": logits})

def input_fn():
    return tf.data.Dataset.from_tensors({"x": np.ones([4, 2], np.float32)}).repeat()

predictions = estimator.Estimator(model_fn, model_dir=sys.argv[1]).predict(input_fn)
print(next(predictions)["logits"].shape)  # the generator stays open until the process exits
"""


def test_a_process_exits_with_a_predict_generator_left_open(tmp_path):
    # Closed while Python shuts down, the generator lets its input go there and then: a
    # thread started at that point would never start on Python 3.10-3.11.
    result = run_python("-c", _PREDICTION_LEFT_OPEN, str(tmp_path / "model"), timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "(2,)" in result.stdout
