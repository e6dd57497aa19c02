"""input_fns that post-process `make_one_shot_iterator().get_next()` (casting, reshaping,
building dicts, py_func, lookup tables) run as under 2.15, where input_fn built a graph."""

import logging

import numpy as np
import pytest
import tensorflow as tf
from helpers import make_estimator

import keras_estimator as estimator

X = np.arange(40 * 2, dtype="float32").reshape(40, 2)  # x[:, 0] = 0, 2, ..., 78
Y = np.arange(40, dtype="int64")
SEEN = {}


def model_fn(features, labels, mode, params):
    SEEN["features"] = {k: (v.dtype, v.shape.as_list()) for k, v in features.items()}
    SEEN["labels"] = (labels.dtype, labels.shape)
    w = tf.compat.v1.get_variable("w", [], initializer=tf.zeros_initializer())
    loss = w * 0 + tf.reduce_mean(features["a"])
    metrics = {"labels": tf.compat.v1.metrics.mean(tf.cast(labels, tf.float32))}
    if "b" in features:
        metrics["b"] = tf.compat.v1.metrics.mean(features["b"])
    train_op = tf.group(tf.compat.v1.assign_add(w, 1.0))
    return estimator.EstimatorSpec(mode, loss=loss, train_op=train_op, eval_metric_ops=metrics)


def cast_reshape_dict():
    dataset = tf.data.Dataset.from_tensor_slices((X, Y)).batch(8)
    with tf.name_scope("input"):
        xs, ys = tf.compat.v1.data.make_one_shot_iterator(dataset).get_next()
    features = {"a": xs[:, 0], "b": tf.reshape(xs[:, 1], [-1, 1]) * 2.0}
    return features, tf.cast(ys, tf.int32) + 1


def two_iterators():
    with tf.compat.v1.variable_scope("input"):
        xs = tf.compat.v1.data.Dataset.from_tensor_slices(X).batch(8).make_one_shot_iterator()
        ys = tf.compat.v1.data.make_one_shot_iterator(tf.data.Dataset.from_tensor_slices(Y)
                                                      .batch(8))  # fmt: skip
        x_batch = xs.get_next()
        return {"a": x_batch[:, 0], "b": x_batch[:, 1:]}, tf.one_hot(ys.get_next(), 3)


def py_func_labels():
    dataset = tf.data.Dataset.from_tensor_slices((X, Y)).batch(8)
    xs, ys = tf.compat.v1.data.make_one_shot_iterator(dataset).get_next()
    labels = tf.compat.v1.py_func(lambda v: (v * 10).astype(np.int64), [ys], tf.int64)
    return {"a": xs[:, 0]}, labels


def lookup_table_labels():
    names = np.array([b"zero", b"one", b"two", b"three"])[Y % 4]
    dataset = tf.data.Dataset.from_tensor_slices((X, names)).batch(8)
    xs, ys = tf.compat.v1.data.make_one_shot_iterator(dataset).get_next()
    keys = tf.constant(["zero", "one", "two", "three"])
    initializer = tf.lookup.KeyValueTensorInitializer(keys, tf.constant([0, 1, 2, 3], tf.int64))
    table = tf.lookup.StaticHashTable(initializer, -1)
    return {"a": xs[:, 0]}, table.lookup(ys)


@pytest.mark.parametrize(
    "input_fn, metrics, labels",
    [
        (cast_reshape_dict, {"b": 80.0, "labels": 20.5}, (tf.int32, [None])),
        (two_iterators, {"b": 40.0, "labels": 0.025}, (tf.float32, [None, 3])),
        (py_func_labels, {"labels": 195.0}, (tf.int64, None)),
        (lookup_table_labels, {"labels": 1.5}, (tf.int64, [None])),
    ],
)
def test_post_processed_iterator_outputs_evaluate_every_batch(tmp_path, input_fn, metrics,
                                                              labels):  # fmt: skip
    est = make_estimator(tmp_path, model_fn)
    result = est.evaluate(input_fn)
    assert result["loss"] == pytest.approx(39.0)  # every batch of x[:, 0] was seen
    for name, value in metrics.items():
        assert result[name] == pytest.approx(value), name
    assert SEEN["features"]["a"] == (tf.float32, [None])
    dtype, shape = SEEN["labels"]
    assert dtype == labels[0] and (labels[1] is None or shape.as_list() == labels[1])


def test_post_processed_iterator_outputs_train_until_the_input_ends(tmp_path, caplog):
    est = make_estimator(tmp_path, model_fn)
    est.train(cast_reshape_dict)
    assert est.get_variable_value("global_step") == 5  # 40 examples, batches of 8
    assert est.get_variable_value("w") == 5.0
    with caplog.at_level(logging.INFO, logger="keras_estimator"):
        est.train(lookup_table_labels, steps=2)
    assert "running it in a graph and session of its own" in caplog.text  # the table needs it
    assert est.get_variable_value("global_step") == 7


def test_sparse_iterator_outputs_are_passed_and_post_processed(tmp_path):
    """get_next() features holding SparseTensors (parsed tf.Examples, TF-Ranking's ELWC),
    returned as they are and reduced into a dense feature."""
    ids = tf.ragged.constant([[1, 2], [3], [4, 5, 6], [7]]).to_sparse()
    seen = []

    def input_fn():
        dataset = tf.data.Dataset.from_tensor_slices({"ids": ids, "y": [0, 1, 0, 1]})
        features = tf.compat.v1.data.make_one_shot_iterator(dataset.batch(2)).get_next()
        label = features.pop("y")
        features["total"] = tf.sparse.reduce_sum(features["ids"], axis=1)
        return features, label

    def sparse_model_fn(features, labels, mode):
        assert isinstance(features["ids"], tf.SparseTensor)
        w = tf.compat.v1.get_variable("w", [], initializer=tf.zeros_initializer())
        loss = w * 0 + tf.reduce_sum(tf.cast(features["total"], tf.float32))
        return estimator.EstimatorSpec(mode, loss=loss, predictions={"total": features["total"],
                                       "ids": tf.sparse.to_dense(features["ids"])})  # fmt: skip

    est = estimator.Estimator(sparse_model_fn, model_dir=str(tmp_path))
    for prediction in est.predict(input_fn):
        seen.append((int(prediction["total"]), list(prediction["ids"])))
    assert seen == [(3, [1, 2, 0]), (3, [3, 0, 0]), (15, [4, 5, 6]), (7, [7, 0, 0])]
