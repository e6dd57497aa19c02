"""input_fns from before tf.data (TF1 queues and QueueRunners) train, evaluate and predict."""

import numpy as np
import tensorflow as tf

import keras_estimator as estimator

v1 = tf.compat.v1


def _model_fn(features, labels, mode):
    logits = v1.layers.dense(features["x"], 3, name="logits")
    if mode == estimator.ModeKeys.PREDICT:
        return estimator.EstimatorSpec(mode, predictions={"class": tf.argmax(logits, 1)})
    loss = v1.losses.sparse_softmax_cross_entropy(labels, logits)
    if mode == estimator.ModeKeys.EVAL:
        accuracy = v1.metrics.accuracy(labels, tf.argmax(logits, 1))
        return estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops={"accuracy": accuracy})
    train_op = v1.train.AdamOptimizer(0.05).minimize(loss, v1.train.get_global_step())
    return estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def _data():
    rng = np.random.RandomState(0)
    x = rng.randn(300, 4).astype(np.float32)
    return x, np.argmax(x[:, :3], axis=1).astype(np.int64)


def _queue_input_fn(x, y, batch_size, num_epochs=None, shuffle=True):
    """The TF1 way: a slice producer feeding (shuffle_)batch through queue runners."""

    def input_fn():
        tensors = [tf.constant(x)] + ([tf.constant(y)] if y is not None else [])
        example = v1.train.slice_input_producer(tensors, num_epochs=num_epochs, shuffle=shuffle)
        if shuffle:
            batch = v1.train.shuffle_batch(
                example, batch_size, capacity=200, min_after_dequeue=50, seed=1
            )
        else:
            batch = v1.train.batch(example, batch_size, allow_smaller_final_batch=True)
        if y is None:
            return {"x": batch[0] if isinstance(batch, list) else batch}
        return {"x": batch[0]}, batch[1]

    return input_fn


def test_a_queue_input_fn_trains_evaluates_and_predicts(tmp_path):
    x, y = _data()
    est = estimator.Estimator(_model_fn, model_dir=str(tmp_path))
    est.train(_queue_input_fn(x, y, 32), steps=150)
    assert est.get_variable_value("global_step") == 150

    # num_epochs=1: the producer's queue closes after one pass, which ends evaluation.
    metrics = est.evaluate(_queue_input_fn(x, y, 50, num_epochs=1, shuffle=False))
    assert metrics["global_step"] == 150
    assert metrics["accuracy"] > 0.9  # the data is separable; the model has learnt it

    predictions = list(est.predict(_queue_input_fn(x, None, 50, num_epochs=1, shuffle=False)))
    assert len(predictions) == 300
    predicted = np.array([p["class"] for p in predictions])
    assert np.mean(predicted == y) > 0.9


def test_a_queue_fed_by_a_hand_made_queue_runner_is_run(tmp_path):
    """A FIFOQueue with a QueueRunner enqueueing parsed tf.Examples (the TF1 test idiom)."""
    x, y = _data()
    serialized = [
        tf.train.Example(
            features=tf.train.Features(
                feature={
                    "x": tf.train.Feature(float_list=tf.train.FloatList(value=row)),
                    "y": tf.train.Feature(int64_list=tf.train.Int64List(value=[label])),
                }
            )
        ).SerializeToString()
        for row, label in zip(x[:40], y[:40])
    ]
    spec = {"x": tf.io.FixedLenFeature([4], tf.float32), "y": tf.io.FixedLenFeature([], tf.int64)}

    def input_fn():
        parsed = v1.io.parse_example(serialized, spec)
        queue = tf.queue.FIFOQueue(10, [tf.float32, tf.int64], shapes=[[40, 4], [40]])
        v1.train.queue_runner.add_queue_runner(
            v1.train.queue_runner.QueueRunner(queue, [queue.enqueue([parsed["x"], parsed["y"]])])
        )
        features, labels = queue.dequeue()
        return {"x": features}, labels

    est = estimator.Estimator(_model_fn, model_dir=str(tmp_path))
    est.train(input_fn, steps=20)
    # The runner never closes its queue: evaluation ends after `steps`.
    metrics = est.evaluate(input_fn, steps=3)
    assert metrics["global_step"] == 20 and np.isfinite(metrics["loss"])
