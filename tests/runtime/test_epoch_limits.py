"""Queue-era epoch limits end the input as in 2.15: `limit_epochs(tensor, num_epochs=N)`
returned by an input_fn gives N batches in train, evaluate and predict (2.15.1: 1 and 3
training steps, 10 and 30 predictions for 10 points); `input_producer(num_epochs=N)` too.
The input of KMeans' own docstring ends after its epoch."""

import numpy as np
import pytest
import tensorflow.compat.v1 as tf

import keras_estimator as estimator
from keras_estimator.runtime.queue_input import EpochLimitedInput, epoch_limits_run_in_a_graph

POINTS = np.random.RandomState(0).uniform(0, 1, [10, 2]).astype("float32")


def _model_fn(features, labels, mode):
    w = tf.get_variable("w", [2, 1])
    out = tf.matmul(features, w)
    loss = tf.reduce_mean(out)
    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, tf.train.get_global_step())
    return estimator.EstimatorSpec(mode, loss=loss, train_op=train_op, predictions={"p": out})


@pytest.mark.parametrize("epochs", [1, 3])
def test_limit_epochs_ends_the_input_after_its_epochs(tmp_path, epochs):
    def input_fn():
        return tf.train.limit_epochs(tf.convert_to_tensor(POINTS), num_epochs=epochs)

    est = estimator.Estimator(_model_fn, model_dir=str(tmp_path))
    est.train(input_fn)
    assert est.get_variable_value("global_step") == epochs
    assert est.evaluate(input_fn)["global_step"] == epochs
    assert len(list(est.predict(input_fn))) == 10 * epochs


def test_input_producer_keeps_its_epoch_limit(tmp_path):
    def input_fn():
        queue = tf.train.input_producer(tf.convert_to_tensor(POINTS), num_epochs=2, shuffle=False)
        return queue.dequeue_many(5)

    est = estimator.Estimator(_model_fn, model_dir=str(tmp_path))
    est.train(input_fn)
    assert est.get_variable_value("global_step") == 4  # 2 epochs of 10 points, 5 a batch


def test_kmeans_docstring_input_ends(tmp_path):
    def input_fn():
        return tf.train.limit_epochs(tf.convert_to_tensor(POINTS * 100), num_epochs=1)

    kmeans = estimator.v1.experimental.KMeans(num_clusters=2, use_mini_batch=False,
                                              model_dir=str(tmp_path))  # fmt: skip
    for _ in range(3):
        kmeans.train(input_fn)
    assert kmeans.cluster_centers().shape == (2, 2)
    assert len(list(kmeans.predict_cluster_index(input_fn))) == 10


def test_epoch_limits_run_in_a_graph_only_stops_eager_limited_calls():
    tensor = tf.constant([1.0])
    with epoch_limits_run_in_a_graph():
        assert tf.train.limit_epochs(tensor) is tensor  # no limit: as TensorFlow does
        with pytest.raises(EpochLimitedInput):
            tf.train.limit_epochs(tensor, num_epochs=1)
        with tf.Graph().as_default():
            limited = tf.train.limit_epochs(tf.constant([1.0]), num_epochs=1)
            assert limited.graph is tf.get_default_graph()  # in a graph: TensorFlow's own
    assert tf.train.limit_epochs.__module__.startswith("tensorflow")
