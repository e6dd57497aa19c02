"""numpy_input_fn and pandas_input_fn: batches, epochs, shuffling, errors, and an Estimator.

pandas is an optional dependency of the package but part of the `test` extra: the pandas
tests run for real, and one test checks the ImportError a user without pandas gets.
"""

import math
import sys

import numpy as np
import pandas as pd
import pytest
import tensorflow
import tensorflow.compat.v1 as tf
from helpers import classifier_model_fn

import keras_estimator as estimator
from keras_estimator.inputs.numpy_io import numpy_input_fn
from keras_estimator.inputs.pandas_io import pandas_input_fn

SHUFFLE_ERROR = (
    r"shuffle must be provided and explicitly set as boolean \(it is recommended to set it as "
    r"True for training\); got None"
)


def batches(input_fn, limit=None):
    """The input_fn's dataset as a list of numpy structures (the first `limit` batches)."""
    dataset = input_fn()
    assert isinstance(dataset, tensorflow.data.Dataset)
    if limit is not None:
        dataset = dataset.take(limit)
    return list(dataset.as_numpy_iterator())


def count_model_fn(features, labels, mode):
    """Evaluates to how many examples it saw and the sums of the feature and labels."""
    tf.get_variable("w", [], initializer=tf.zeros_initializer())
    x = tf.cast(features["x"][:, 0], tf.float32)
    if mode == estimator.ModeKeys.PREDICT:
        return estimator.EstimatorSpec(mode, predictions={"x": x})
    ones = tf.ones_like(x, tf.bool)
    metrics = {
        "count": tf.metrics.true_positives(ones, ones),
        "x_sum": tf.metrics.mean(x * tf.cast(tf.size(x), tf.float32)),
        "label_mean": tf.metrics.mean(tf.cast(labels, tf.float32)),
    }
    return estimator.EstimatorSpec(mode, loss=tf.reduce_mean(x), eval_metric_ops=metrics)


# -- numpy_input_fn: batching and epochs -----------------------------------------------------


def test_one_epoch_keeps_the_last_partial_batch_in_order():
    x = {"a": np.arange(5), "b": np.arange(5.0) * 10}
    y = -np.arange(5)
    got = batches(numpy_input_fn(x, y, batch_size=2, num_epochs=1, shuffle=False))
    assert len(got) == math.ceil(5 / 2)
    np.testing.assert_array_equal(got[0][0]["a"], [0, 1])
    np.testing.assert_array_equal(got[0][0]["b"], [0.0, 10.0])
    np.testing.assert_array_equal(got[0][1], [0, -1])
    np.testing.assert_array_equal(got[2][0]["a"], [4])
    np.testing.assert_array_equal(got[2][1], [-4])
    assert got[0][0]["a"].dtype == np.int64 and got[0][0]["b"].dtype == np.float64


def test_epochs_run_back_to_back_and_batches_span_them():
    # What tf.estimator 2.15 fed: [0 1] [2 3] [4 0] [1 2] [3 4].
    x = {"a": np.arange(5)}
    got = batches(numpy_input_fn(x, -np.arange(5), batch_size=2, num_epochs=2, shuffle=False))
    assert [b[0]["a"].tolist() for b in got] == [[0, 1], [2, 3], [4, 0], [1, 2], [3, 4]]
    assert [b[1].tolist() for b in got][2] == [-4, 0]
    three = batches(numpy_input_fn(x, batch_size=2, num_epochs=3, shuffle=False))
    assert len(three) == math.ceil(15 / 2) and three[-1]["a"].tolist() == [4]
    assert batches(numpy_input_fn(x, batch_size=2, num_epochs=0, shuffle=False)) == []


def test_num_epochs_none_repeats_forever_with_full_batches():
    input_fn = numpy_input_fn(
        np.arange(5), {"l1": -np.arange(5)}, batch_size=3, shuffle=False, num_epochs=None
    )
    dataset = input_fn()
    features_spec, labels_spec = dataset.element_spec
    assert features_spec.shape.as_list() == [3]
    assert labels_spec["l1"].shape.as_list() == [3]
    got = batches(input_fn, limit=4)
    assert [b[0].tolist() for b in got] == [[0, 1, 2], [3, 4, 0], [1, 2, 3], [4, 0, 1]]
    assert [b[1]["l1"].tolist() for b in got][1] == [-3, -4, 0]


def test_array_x_is_a_single_tensor_and_shapes_follow_the_arrays():
    x = np.arange(12, dtype=np.float32).reshape(6, 2)
    (features, labels), *_ = batches(numpy_input_fn(x, np.arange(6), batch_size=4, shuffle=False))
    assert isinstance(features, np.ndarray)
    np.testing.assert_array_equal(features, x[:4])
    dataset = numpy_input_fn(x, np.arange(6), batch_size=4, shuffle=False)()
    assert dataset.element_spec[0].shape.as_list() == [None, 2]
    assert dataset.element_spec[1].shape.as_list() == [None]
    one_d = numpy_input_fn({"v": np.arange(6.0)}, batch_size=4, shuffle=False)()
    assert one_d.element_spec["v"].shape.as_list() == [None]


def test_without_y_the_dataset_holds_features_only():
    got = batches(
        numpy_input_fn(
            {"a": np.arange(3), "s": np.array(["p", "q", "r"])}, batch_size=2, shuffle=False
        )
    )
    assert isinstance(got[0], dict)
    assert got[0]["s"].tolist() == [b"p", b"q"]
    assert got[1]["a"].tolist() == [2]


def test_dict_y_gives_dict_labels():
    got = batches(
        numpy_input_fn(
            {"a": np.arange(3)}, {"y1": np.arange(3), "y2": np.ones(3)}, batch_size=3, shuffle=False
        )
    )
    assert len(got) == 1
    assert sorted(got[0][1]) == ["y1", "y2"]
    np.testing.assert_array_equal(got[0][1]["y2"], [1.0, 1.0, 1.0])


# -- numpy_input_fn: shuffling -------------------------------------------------------------


def test_without_shuffle_every_call_gives_the_same_order():
    x = {"a": np.arange(50)}
    first = batches(numpy_input_fn(x, batch_size=7, num_epochs=2, shuffle=False))
    second = batches(numpy_input_fn(x, batch_size=7, num_epochs=2, shuffle=False))
    flat = np.concatenate([b["a"] for b in first])
    np.testing.assert_array_equal(flat, np.concatenate([np.arange(50)] * 2))
    assert len(second) == len(first)
    assert all(np.array_equal(a["a"], b["a"]) for a, b in zip(first, second))


def test_shuffle_permutes_each_epoch_and_keeps_features_with_labels():
    x = np.arange(100)
    got = batches(numpy_input_fn({"a": x}, x * 3, batch_size=16, num_epochs=2, shuffle=True))
    assert len(got) == math.ceil(200 / 16)
    features = np.concatenate([b[0]["a"] for b in got])
    labels = np.concatenate([b[1] for b in got])
    np.testing.assert_array_equal(labels, features * 3)
    assert sorted(features[:100]) == list(x) and sorted(features[100:]) == list(x)
    assert not np.array_equal(features[:100], x)
    # A small buffer (tf.estimator's queue_capacity) still yields every example once.
    small = batches(numpy_input_fn({"a": x}, batch_size=10, shuffle=True, queue_capacity=4))
    assert sorted(np.concatenate([b["a"] for b in small])) == list(x)


# -- numpy_input_fn: errors ----------------------------------------------------------------


@pytest.mark.parametrize("shuffle", [None, 1, "yes"])
def test_shuffle_must_be_an_explicit_bool(shuffle):
    with pytest.raises(ValueError, match="shuffle must be provided and explicitly set"):
        numpy_input_fn({"a": np.arange(3)}, shuffle=shuffle)
    with pytest.raises(ValueError, match=SHUFFLE_ERROR):
        numpy_input_fn({"a": np.arange(3)})


def test_data_errors_are_raised_when_the_input_fn_is_called():
    x = {"a": np.arange(5), "b": np.arange(5)}
    cases = [
        (
            dict(x={}),
            ValueError,
            r"^x cannot be an empty dict\. Expected at least one feature array\. Fix: pass "
            r"x=\{'feature': array\}\. Received: x=\{\}$",
        ),
        (
            dict(x=np.array([])),
            ValueError,
            r"^x cannot be an empty array\. Expected at least one example\. "
            r"Received: x\.shape=\(0,\)$",
        ),
        (
            dict(x=[1, 2]),
            TypeError,
            r"^x must be a dict or array; got list\. Fix: convert it, e\.g\. x=np\.asarray\(x\) "
            r"or x=\{'feature': np\.asarray\(x\)\}\. Received: type\(x\)=list$",
        ),
        (
            dict(x=x, y={}),
            ValueError,
            r"^y cannot be empty dict, use None instead\. Received: y=\{\}$",
        ),
        (
            dict(x=x, y={"a": np.arange(5)}),
            ValueError,
            r"^1 duplicate keys are found in both x and y: \{'a'\}\. Expected each key in x "
            r"or in y only\. Fix: rename the label keys\.$",
        ),
        (
            dict(x=x, y=np.arange(4)),
            ValueError,
            r"Length of tensors in x and y is mismatched\. All elements in x and y must have the "
            r"same length\.\nShapes in x: \{'a': \(5,\), 'b': \(5,\)\}\nShapes in y: \(4,\)\n",
        ),
        (
            dict(x={"a": np.arange(4)}, y={"b": np.arange(5), "c": np.arange(5)}),
            ValueError,
            r"Shapes in x: \{'a': \(4,\)\}\nShapes in y: \{'b': \(5,\), 'c': \(5,\)\}",
        ),
        (
            dict(x={"a": np.arange(4), "b": np.arange(3)}),
            ValueError,
            r"Shapes in x: \{'a': \(4,\), 'b': \(3,\)\}\nShapes in y: None",
        ),
    ]
    for kwargs, error, message in cases:
        input_fn = numpy_input_fn(**kwargs, shuffle=False)  # nothing checked yet
        with pytest.raises(error, match=message):
            input_fn()


def test_batch_size_and_num_epochs_are_checked():
    with pytest.raises(ValueError, match="batch_size must be a positive integer; got 0"):
        numpy_input_fn({"a": np.arange(3)}, batch_size=0, shuffle=False)
    with pytest.raises(ValueError, match="num_epochs must be None .* got -1"):
        numpy_input_fn({"a": np.arange(3)}, num_epochs=-1, shuffle=False)
    with pytest.raises(TypeError, match="num_epochs must be None"):
        numpy_input_fn({"a": np.arange(3)}, num_epochs=1.5, shuffle=False)


# -- numpy_input_fn with an Estimator ------------------------------------------------------


def test_estimator_trains_evaluates_and_predicts_with_numpy_input_fn(tmp_path, toy_data):
    x, y = toy_data
    est = estimator.Estimator(
        classifier_model_fn,
        model_dir=str(tmp_path / "clf"),
        params={"n_classes": 3, "lr": 0.05},
        config=estimator.RunConfig(tf_random_seed=1),
    )
    est.train(numpy_input_fn({"x": x}, y, batch_size=32, num_epochs=None, shuffle=True), steps=60)
    assert est.get_variable_value("global_step") == 60
    # One finite epoch: training stops when the examples run out, after ceil(256 / 100) steps.
    est.train(numpy_input_fn({"x": x}, y, batch_size=100, num_epochs=1, shuffle=True))
    assert est.get_variable_value("global_step") == 60 + 3
    metrics = est.evaluate(numpy_input_fn({"x": x}, y, batch_size=64, shuffle=False))
    assert metrics["global_step"] == 63
    assert metrics["accuracy"] > 0.8
    predictions = list(est.predict(numpy_input_fn({"x": x}, batch_size=50, shuffle=False)))
    assert len(predictions) == len(x)
    classes = np.array([p["classes"] for p in predictions])
    assert np.mean(classes == y) == pytest.approx(metrics["accuracy"], abs=1e-6)


def test_evaluate_sees_every_example_once_including_the_partial_batch(tmp_path):
    x = np.arange(1, 11, dtype=np.float32).reshape(10, 1)
    y = np.arange(10, dtype=np.int64)
    est = estimator.Estimator(count_model_fn, model_dir=str(tmp_path))
    metrics = est.evaluate(numpy_input_fn({"x": x}, y, batch_size=4, shuffle=False))
    assert metrics["count"] == 10
    assert metrics["label_mean"] == pytest.approx(4.5)
    twice = est.evaluate(numpy_input_fn({"x": x}, y, batch_size=4, num_epochs=2, shuffle=False))
    assert twice["count"] == 20
    # Array x and dict y reach the model_fn as a tensor and a dict.
    seen = {}

    def model_fn(features, labels, mode):
        seen["features"], seen["labels"] = features, labels
        return count_model_fn({"x": features}, labels["y"], mode)

    est = estimator.Estimator(model_fn, model_dir=str(tmp_path / "array"))
    assert est.evaluate(numpy_input_fn(x, {"y": y}, batch_size=3, shuffle=False))["count"] == 10
    assert isinstance(seen["features"], tf.Tensor) and sorted(seen["labels"]) == ["y"]


# -- pandas_input_fn -----------------------------------------------------------------------


def test_pandas_input_fn_without_pandas_raises_a_clear_import_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)  # `import pandas` now fails
    with pytest.raises(ImportError) as caught:
        pandas_input_fn(None, shuffle=False)
    message = str(caught.value)
    assert "pandas_input_fn needs pandas, which is not installed" in message
    assert "optional dependency" in message and "`pip install pandas`" in message
    # tf.estimator 2.15 raised a TypeError here; code catching that still works.
    assert isinstance(caught.value, TypeError)


def test_pandas_dataframe_columns_become_features():
    x = pd.DataFrame(
        {"a": np.arange(5), "b": np.arange(5.0) * 10, "s": list("vwxyz")}, index=np.arange(100, 105)
    )
    y = pd.Series(-np.arange(5), index=np.arange(100, 105))
    got = batches(pandas_input_fn(x, y, batch_size=2, num_epochs=2, shuffle=False))
    assert len(got) == math.ceil(10 / 2)
    assert sorted(got[0][0]) == ["a", "b", "s"]
    assert [b[0]["a"].tolist() for b in got] == [[0, 1], [2, 3], [4, 0], [1, 2], [3, 4]]
    assert got[0][0]["s"].tolist() == [b"v", b"w"]
    assert got[2][1].tolist() == [-4, 0]
    forever = pandas_input_fn(x, y, batch_size=3, num_epochs=None, shuffle=True)()
    assert forever.element_spec[0]["a"].shape.as_list() == [3]
    shuffled = batches(pandas_input_fn(x, y, batch_size=5, shuffle=True))
    assert sorted(shuffled[0][0]["a"]) == list(range(5))
    np.testing.assert_array_equal(shuffled[0][1], -shuffled[0][0]["a"])
    features_only = batches(pandas_input_fn(x, batch_size=4, shuffle=False))
    assert isinstance(features_only[0], dict) and features_only[1]["a"].tolist() == [4]


def test_pandas_dataframe_y_gives_dict_labels():
    x = pd.DataFrame({"a": np.arange(3), "target": np.arange(3)})
    y = pd.DataFrame({"a": [1, 2, 3], "l2": [4.0, 5.0, 6.0]})  # y may reuse x's names
    (features, labels), *_ = batches(pandas_input_fn(x, y, batch_size=3, shuffle=False))
    assert sorted(features) == ["a", "target"] and sorted(labels) == ["a", "l2"]
    assert labels["a"].tolist() == [1, 2, 3] and features["a"].tolist() == [0, 1, 2]


def test_pandas_errors():
    x = pd.DataFrame({"a": np.arange(3), "target": np.arange(3)})
    with pytest.raises(ValueError, match=SHUFFLE_ERROR):
        pandas_input_fn(x)
    with pytest.raises(
        TypeError,
        match=r"^target_column must be a string type\. Fix: pass target_column='name'\. "
        r"Received: target_column=1$",
    ):
        pandas_input_fn(x, pd.Series([1, 2, 3]), shuffle=False, target_column=1)
    with pytest.raises(
        ValueError,
        match="^Cannot use name target for target column: DataFrame already has a column "
        "with that name: ",
    ):
        pandas_input_fn(x, pd.Series([1, 2, 3]), shuffle=False)
    assert pandas_input_fn(x, pd.Series([1, 2, 3]), shuffle=False, target_column="label")
    with pytest.raises(ValueError, match=r"^Index for x and y are mismatched\.\nIndex for x: "):
        pandas_input_fn(
            x, pd.Series([1, 2, 3], index=[1, 2, 3]), shuffle=False, target_column="label"
        )
    with pytest.raises(TypeError, match="x must be a pandas DataFrame; got ndarray"):
        pandas_input_fn(np.arange(3), shuffle=False)


def test_estimator_with_pandas_input_fn(tmp_path, toy_data):
    x, y = toy_data
    frame = pd.DataFrame({f"f{i}": x[:, i] for i in range(x.shape[1])})
    labels = pd.Series(y)

    def model_fn(features, labels, mode, params):
        stacked = tf.stack([features[f"f{i}"] for i in range(x.shape[1])], axis=1)
        return classifier_model_fn({"x": stacked}, labels, mode, params)

    est = estimator.Estimator(
        model_fn,
        model_dir=str(tmp_path),
        params={"lr": 0.05},
        config=estimator.RunConfig(tf_random_seed=1),
    )
    est.train(
        pandas_input_fn(frame, labels, batch_size=32, num_epochs=None, shuffle=True), steps=60
    )
    metrics = est.evaluate(pandas_input_fn(frame, labels, batch_size=100, shuffle=False))
    assert metrics["global_step"] == 60 and metrics["accuracy"] > 0.8
