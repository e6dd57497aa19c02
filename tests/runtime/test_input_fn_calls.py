"""input_fn: the arguments it names, what it may return, and TF1 iterator patterns."""

import functools

import numpy as np
import pytest
import tensorflow.compat.v1 as tf
from helpers import make_estimator

import keras_estimator as estimator
from keras_estimator.runtime.input_fn_calls import call_input_fn


def sum_model_fn(features, labels, mode):
    """Evaluates to the mean of features["x"] and labels over all examples seen."""
    tf.get_variable("w", [], initializer=tf.zeros_initializer())
    x = tf.reshape(tf.cast(features["x"], tf.float32), [-1])
    metrics = {
        "x_mean": tf.metrics.mean(x),
        "x_count": tf.metrics.true_positives(tf.ones_like(x, tf.bool), tf.ones_like(x, tf.bool)),
    }
    if labels is not None:
        metrics["label_mean"] = tf.metrics.mean(tf.cast(labels, tf.float32))
    if mode == estimator.ModeKeys.PREDICT:
        return estimator.EstimatorSpec(mode, predictions={"x": x})
    return estimator.EstimatorSpec(mode, loss=tf.reduce_mean(x), eval_metric_ops=metrics)


X = np.arange(20, dtype=np.float32)
Y = np.arange(20, dtype=np.int64) * 2


def evaluate(input_fn, tmp_path, **kwargs):
    est = estimator.Estimator(sum_model_fn, model_dir=str(tmp_path), **kwargs)
    return est.evaluate(input_fn)


def test_input_fn_gets_only_the_arguments_it_names(tmp_path):
    seen = {}

    def input_fn(mode, params, config):
        seen.update(mode=mode, params=params, config=config)
        return tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).batch(5)

    def model_fn(features, labels, mode, params):
        return sum_model_fn(features, labels, mode)

    est = make_estimator(tmp_path, model_fn, params={"batch": 5})
    est.evaluate(input_fn)
    assert seen["mode"] == estimator.ModeKeys.EVAL
    assert seen["params"] == {"batch": 5}
    assert isinstance(seen["config"], estimator.RunConfig)

    def no_args():
        return tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).batch(5)

    assert evaluate(no_args, tmp_path / "b")["x_count"] == 20
    partial = functools.partial(
        lambda data, mode: data.batch(4), tf.data.Dataset.from_tensor_slices(({"x": X}, Y))
    )
    assert evaluate(partial, tmp_path / "c")["x_count"] == 20


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(
            lambda: tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).batch(6), id="dataset_pair"
        ),
        pytest.param(lambda: ({"x": tf.constant(X)}, tf.constant(Y)), id="tensor_tuple"),
        pytest.param(
            lambda: tf.data.make_one_shot_iterator(
                tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).batch(6)
            ).get_next(),
            id="compat_v1_one_shot_iterator",
        ),
        pytest.param(
            lambda: (
                tf.data.Dataset.from_tensor_slices(({"x": X}, Y))
                .batch(6)
                .make_one_shot_iterator()
                .get_next()
            ),
            id="dataset_method_one_shot_iterator",
        ),
        pytest.param(
            lambda: tf.data.make_initializable_iterator(
                tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).batch(6)
            ).get_next(),
            id="initializable_iterator",
        ),
    ],
)
def test_supported_return_values_stream_every_example(tmp_path, make):
    result = evaluate(make, tmp_path)
    assert result["x_count"] == 20  # every example once: not the first batch repeated
    assert result["x_mean"] == pytest.approx(X.mean())
    assert result["label_mean"] == pytest.approx(Y.mean())


def test_iterator_get_next_streams_the_whole_dataset_in_training(tmp_path):
    """The seed-era pattern trains on every batch in turn, exactly as under tf.estimator."""
    seen_batches = []

    def model_fn(features, labels, mode):
        total = tf.get_variable("total", [], initializer=tf.zeros_initializer())
        first = tf.get_variable("first_values", [4], initializer=tf.zeros_initializer())
        loss = tf.reduce_sum(features["x"]) * 0.0 + total * 0.0
        gs = tf.train.get_global_step()
        record = tf.scatter_update(first, [tf.minimum(gs, 3)], [features["x"][0]])
        train_op = tf.group(tf.assign_add(total, tf.reduce_sum(features["x"])), record)
        return estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

    def input_fn():
        ds = tf.data.Dataset.from_tensor_slices({"x": X}).batch(5)
        iterator = ds.make_one_shot_iterator()
        return iterator.get_next()

    est = estimator.Estimator(model_fn, model_dir=str(tmp_path))
    est.train(input_fn)
    assert est.get_variable_value("global_step") == 4
    assert est.get_variable_value("total") == pytest.approx(X.sum())
    np.testing.assert_allclose(est.get_variable_value("first_values"), [0, 5, 10, 15])
    del seen_batches


def test_tfrecord_pipeline_with_v1_parsing(tmp_path):
    path = str(tmp_path / "data.tfrecord")
    images = (np.arange(10 * 4) % 7).astype(np.uint8).reshape(10, 4)
    with tf.io.TFRecordWriter(path) as writer:
        for image, label in zip(images, range(10)):
            example = tf.train.Example(
                features=tf.train.Features(
                    feature={
                        "image": tf.train.Feature(
                            bytes_list=tf.train.BytesList(value=[image.tobytes()])
                        ),
                        "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[label])),
                    }
                )
            )
            writer.write(example.SerializeToString())

    def parse(serialized):
        parsed = tf.parse_single_example(
            serialized,
            {
                "image": tf.FixedLenFeature([], tf.string),
                "label": tf.FixedLenFeature([], tf.int64),
            },
        )
        image = tf.cast(tf.decode_raw(parsed["image"], tf.uint8), tf.float32)
        return {"x": tf.reshape(image, [4])}, parsed["label"]

    def input_fn():
        return tf.data.TFRecordDataset([path]).map(parse).batch(3)

    result = evaluate(input_fn, tmp_path / "m")
    assert result["x_count"] == 40
    assert result["x_mean"] == pytest.approx(images.mean())
    assert result["label_mean"] == pytest.approx(4.5)


def test_features_only_dataset_and_predict(tmp_path):
    est = estimator.Estimator(sum_model_fn, model_dir=str(tmp_path))
    result = est.evaluate(lambda: tf.data.Dataset.from_tensor_slices({"x": X}).batch(7))
    assert "label_mean" not in result and result["x_count"] == 20
    values = [
        p["x"] for p in est.predict(lambda: tf.data.Dataset.from_tensor_slices({"x": X}).batch(7))
    ]
    np.testing.assert_allclose(values, X)


@pytest.mark.parametrize(
    "returned, message",
    [
        pytest.param(lambda: ({"x": X}, Y, Y), "of 3 elements", id="list_of_3"),
        pytest.param(lambda: "data.csv", "type str", id="string"),
        pytest.param(lambda: None, "input_fn returned None", id="none"),
        pytest.param(lambda: [1, 2, 3], "of 3 elements", id="python_list"),
        pytest.param(
            lambda: ({"x": tf.zeros([4, 1])}, tf.zeros([5])),
            "different batch sizes",
            id="batch_mismatch",
        ),
        pytest.param(
            lambda: tf.data.Dataset.from_tensor_slices((X, Y, Y)),
            "tuples of 3",
            id="dataset_of_triples",
        ),
    ],
)
def test_bad_input_fn_returns_raise_clear_errors(tmp_path, returned, message):
    est = estimator.Estimator(sum_model_fn, model_dir=str(tmp_path))
    with pytest.raises(ValueError, match=message):
        est.evaluate(returned)
    with pytest.raises(ValueError, match=message):
        est.train(returned, steps=1)
    assert list((tmp_path).iterdir()) == []  # nothing written to model_dir


def test_input_fn_with_an_unknown_argument_raises(tmp_path):
    def input_fn(batch_size):
        return tf.data.Dataset.from_tensor_slices({"x": X}).batch(batch_size)

    est = estimator.Estimator(sum_model_fn, model_dir=str(tmp_path))
    with pytest.raises(TypeError, match=r"input_fn has arguments \['batch_size'\]"):
        est.evaluate(input_fn)


def test_labels_returned_but_model_fn_takes_none(tmp_path):
    def model_fn(features, mode):
        tf.get_variable("w", [], initializer=tf.zeros_initializer())
        return estimator.EstimatorSpec(mode, loss=tf.reduce_mean(features["x"]))

    est = estimator.Estimator(model_fn, model_dir=str(tmp_path))
    with pytest.raises(
        ValueError, match="model_fn does not take labels, but input_fn returns labels."
    ):
        est.evaluate(lambda: tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).batch(4))
    assert est.evaluate(lambda: tf.data.Dataset.from_tensor_slices({"x": X}).batch(4))[
        "loss"
    ] == pytest.approx(X.mean())


def test_input_fn_arguments_with_defaults_are_left_alone(tmp_path):
    def input_fn(mode, batch_size=5):
        return tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).batch(batch_size)

    assert evaluate(input_fn, tmp_path)["x_count"] == 20


def test_predict_never_shows_labels_to_the_model_fn(tmp_path):
    seen = []

    def model_fn(features, labels, mode):
        seen.append((mode, labels))
        return sum_model_fn(features, labels, mode)

    est = estimator.Estimator(model_fn, model_dir=str(tmp_path))
    eval_input_fn = lambda: tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).batch(5)  # noqa: E731
    assert len(list(est.predict(eval_input_fn))) == 20  # an eval input_fn reused for predict
    predict_labels = [labels for mode, labels in seen if mode == estimator.ModeKeys.PREDICT]
    assert predict_labels and all(labels is None for labels in predict_labels)


def test_a_tuple_of_other_length_starts_with_2_15s_message(tmp_path):
    est = estimator.Estimator(sum_model_fn, model_dir=str(tmp_path))
    len_2 = "input_fn should return (features, labels) as a len 2 tuple."
    for returned in (lambda: ({"x": X}, Y, Y), lambda: tf.data.Dataset.from_tensors((X, Y, Y))):
        with pytest.raises(ValueError) as info:
            est.train(returned, steps=1)
        assert str(info.value).startswith(len_2) and "Received:" in str(info.value)


def _count(dataset, limit=10):
    return sum(1 for _ in dataset.take(limit))


@pytest.mark.parametrize("mode", [estimator.ModeKeys.EVAL, estimator.ModeKeys.PREDICT])
def test_repeat_tensors_feeds_returned_tensors_on_every_step(mode):
    config = estimator.RunConfig()

    def tensors():
        return {"x": tf.constant([[1.0], [2.0]])}, tf.constant([1, 0])

    assert _count(call_input_fn(tensors, mode, {}, config)) == 1  # by default: one batch
    repeated = call_input_fn(tensors, mode, {}, config, repeat_tensors=True)
    assert _count(repeated) == 10
    features, labels = next(iter(repeated))
    assert features["x"].numpy().tolist() == [[1.0], [2.0]] and labels.numpy().tolist() == [1, 0]

    def dataset():
        return tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).batch(5)

    assert _count(call_input_fn(dataset, mode, {}, config, repeat_tensors=True)) == 4


@pytest.mark.parametrize("wrap", [list, tuple], ids=["list", "tuple"])
def test_input_fn_returning_numpy_features_and_labels(tmp_path, toy_data, wrap):
    """tf.estimator took numpy arrays (and a list) as an input_fn's (features, labels)."""

    x, y = toy_data
    est = make_estimator(tmp_path)
    est.train(lambda: wrap([{"x": x}, y]), steps=2)
    assert est.evaluate(lambda: wrap([{"x": x}, y]), steps=1)["global_step"] == 2
    with pytest.raises(ValueError, match=r"different batch sizes.*Received: batch sizes"):
        est.train(lambda: wrap([{"x": x}, y[:10]]), steps=1)
