"""tf.contrib names TF1 estimator trainers used, under install(): `tf.contrib.lookup`'s
vocabulary tables (string labels -> class ids, in an input_fn or a model_fn),
`tf.contrib.eager.list_devices` (counting GPUs) and `tf.contrib.estimator.add_metrics` /
`forward_features` (an example key in the predictions and the serving signature)."""

import numpy as np
import pytest
import tensorflow as tf
from helpers import classifier_model_fn, dataset_input_fn, make_estimator

import keras_estimator as estimator

v1 = tf.compat.v1


def test_index_tables_from_a_tensor_and_a_file(installed, tmp_path):
    table = v1.contrib.lookup.index_table_from_tensor(tf.constant(["<=50K", ">50K"]))
    ids = table.lookup(tf.constant(["<=50K", ">50K", "other"]))
    assert ids.dtype == tf.int64 and ids.numpy().tolist() == [0, 1, -1]
    with_buckets = v1.contrib.lookup.index_table_from_tensor(["a", "b"], num_oov_buckets=3)
    oov = with_buckets.lookup(tf.constant(["b", "zzz", "zzz"])).numpy()
    assert oov[0] == 1 and 2 <= oov[1] < 5 and oov[1] == oov[2]

    vocabulary = tmp_path / "vocab.txt"
    vocabulary.write_text("red\ngreen\nblue\n")
    from tensorflow.contrib.lookup import index_table_from_file, index_to_string_table_from_file

    by_line = index_table_from_file(str(vocabulary), default_value=7)
    assert by_line.lookup(tf.constant(["blue", "red", "pink"])).numpy().tolist() == [2, 0, 7]
    names = index_to_string_table_from_file(str(vocabulary))
    assert names.lookup(tf.constant([1, 9], tf.int64)).numpy().tolist() == [b"green", b"UNK"]
    back = v1.contrib.lookup.index_to_string_table_from_tensor(["x", "y"], default_value="?")
    assert back.lookup(tf.constant([1, 2], tf.int64)).numpy().tolist() == [b"y", b"?"]
    with pytest.raises(ValueError, match="num_oov_buckets must be greater or equal than 0"):
        v1.contrib.lookup.index_table_from_tensor(["a"], num_oov_buckets=-1)
    with pytest.raises(AttributeError, match="tf.lookup"):
        _ = v1.contrib.lookup.string_to_index_table_from_tensor


def test_a_label_table_in_the_model_fn_and_the_input_fn_trains(installed, tmp_path, toy_data):
    x, y = toy_data
    words = np.array(["zero", "one", "two"])[y]

    def model_fn(features, labels, mode, params):
        table = v1.contrib.lookup.index_table_from_tensor(tf.constant(["zero", "one", "two"]))
        return classifier_model_fn(features, table.lookup(labels), mode, params)

    est = make_estimator(tmp_path, model_fn)
    est.train(dataset_input_fn(x, words, repeat=True), steps=30)
    assert est.evaluate(dataset_input_fn(x, words))["accuracy"] > 0.6

    def input_fn():  # the table in the input pipeline, as cmls-census-estimator has it
        table = v1.contrib.lookup.index_table_from_tensor(tf.constant(["zero", "one", "two"]))
        return dataset_input_fn(x, words)().map(lambda f, label: (f, table.lookup(label)))

    # The same model_dir read by a model_fn taking int labels.
    assert make_estimator(tmp_path).evaluate(input_fn)["accuracy"] > 0.6


def test_list_devices_names_this_process_devices(installed):
    devices = v1.contrib.eager.list_devices()
    assert devices and all(d.startswith("/job:localhost/replica:0/task:0/device:") for d in devices)
    assert sum("/device:CPU" in d for d in devices) == len(tf.config.list_logical_devices("CPU"))
    with pytest.raises(AttributeError, match="tf.function"):
        _ = v1.contrib.eager.defun


def test_add_metrics_and_forward_features(installed, tmp_path, toy_data):
    x, y = toy_data
    keys = np.arange(len(x), dtype=np.int64)

    def input_fn(labels=True):
        features = {"x": x, "key": keys}
        data = (features, y) if labels else features
        return tf.data.Dataset.from_tensor_slices(data).batch(32)

    def model_fn(features, labels, mode, params):
        return classifier_model_fn({"x": features["x"]}, labels, mode, params)

    def mean_label(labels):
        metric = tf.keras.metrics.Mean()
        metric.update_state(tf.cast(labels, tf.float32))
        return {"mean_label": metric}

    est = v1.contrib.estimator.add_metrics(make_estimator(tmp_path, model_fn), mean_label)
    assert v1.contrib.estimator.add_metrics is estimator.add_metrics
    est = v1.contrib.estimator.forward_features(est, "key")
    est.train(lambda: input_fn().repeat(), steps=5)
    assert est.evaluate(input_fn)["mean_label"] == pytest.approx(y.mean(), rel=1e-5)
    predictions = list(est.predict(lambda: input_fn(labels=False)))
    assert [p["key"] for p in predictions] == keys.tolist()

    def serving_input_fn():
        inputs = {
            "x": v1.placeholder(tf.float32, [None, 8]),
            "key": v1.placeholder(tf.int64, [None]),
        }
        return estimator.export.ServingInputReceiver(inputs, inputs)

    exported = est.export_saved_model(str(tmp_path / "export"), serving_input_fn)
    serving = tf.saved_model.load(exported).signatures["serving_default"]
    outputs = serving(x=tf.constant(x[:2]), key=tf.constant([41, 42], tf.int64))
    assert outputs["key"].numpy().tolist() == [41, 42]

    with pytest.raises(ValueError, match='Key "missing" is not in the features'):
        list(v1.contrib.estimator.forward_features(est, ["missing"]).predict(
            lambda: input_fn(labels=False)))  # fmt: skip
    with pytest.raises(TypeError, match="keys should be either a string or a list"):
        v1.contrib.estimator.forward_features(est, 3)


def test_the_contrib_lookup_table_classes(installed, tmp_path):
    lookup = v1.contrib.lookup
    static = lookup.HashTable(
        lookup.KeyValueTensorInitializer(tf.constant(["a", "b"]), tf.constant([3, 4], tf.int64)),
        default_value=-1,
    )
    assert static.lookup(tf.constant(["b", "a", "c"])).numpy().tolist() == [4, 3, -1]
    words = tmp_path / "words.txt"
    words.write_text("x\ny\n")
    by_line = lookup.HashTable(
        lookup.TextFileInitializer(
            str(words), tf.string, lookup.TextFileIndex.WHOLE_LINE,
            tf.int64, lookup.TextFileIndex.LINE_NUMBER,
        ),
        default_value=-1,
    )  # fmt: skip
    assert by_line.lookup(tf.constant(["y", "x", "z"])).numpy().tolist() == [1, 0, -1]
    mutable = lookup.MutableHashTable(tf.string, tf.int64, default_value=0)
    mutable.insert(tf.constant(["k"]), tf.constant([9], tf.int64))
    assert mutable.lookup(tf.constant(["k", "q"])).numpy().tolist() == [9, 0]
    dense = lookup.MutableDenseHashTable(tf.int64, tf.int64, default_value=-1, empty_key=0,
                                         deleted_key=-2)  # fmt: skip
    dense.insert(tf.constant([5], tf.int64), tf.constant([50], tf.int64))
    assert dense.lookup(tf.constant([5, 6], tf.int64)).numpy().tolist() == [50, -1]
