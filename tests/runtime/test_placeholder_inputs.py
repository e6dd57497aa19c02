"""An input_fn over placeholders, fed by a hook that runs the initializable iterator's
initializer with a feed_dict in after_create_session (TF-Ranking's libsvm example, TF1's
"feed numpy arrays" guide): it runs in a graph of its own, and the hook's session.run
reaches that graph's session, as under 2.15."""

import numpy as np
import pytest
import tensorflow.compat.v1 as tf

import keras_estimator as estimator

X = np.arange(24, dtype="float32").reshape(12, 2)
Y = (X[:, 0] > 10).astype("float32")


class IteratorInitializerHook(tf.train.SessionRunHook):
    def __init__(self):
        self.iterator_initializer_fn = None

    def after_create_session(self, session, coord):
        self.iterator_initializer_fn(session)


def _inputs(repeat):
    hook = IteratorInitializerHook()

    def input_fn():
        x = tf.placeholder(tf.float32, X.shape)
        y = tf.placeholder(tf.float32, Y.shape)
        dataset = tf.data.Dataset.from_tensor_slices(({"x": x}, y)).batch(4)
        iterator = tf.data.make_initializable_iterator(dataset.repeat() if repeat else dataset)
        hook.iterator_initializer_fn = lambda session: session.run(
            iterator.initializer, feed_dict={x: X, y: Y}
        )
        return iterator.get_next()

    return input_fn, hook


def _model_fn(features, labels, mode):
    w = tf.get_variable("w", [2, 1])
    logits = tf.matmul(features["x"], w)[:, 0]
    if mode == estimator.ModeKeys.PREDICT:
        return estimator.EstimatorSpec(mode, predictions={"y": logits})
    loss = tf.losses.mean_squared_error(labels, logits)
    train_op = tf.train.GradientDescentOptimizer(1e-3).minimize(loss, tf.train.get_global_step())
    return estimator.EstimatorSpec(mode, loss=loss, train_op=train_op, predictions={"y": logits},
                                   eval_metric_ops={"n": tf.metrics.mean(labels)})  # fmt: skip


def test_placeholders_fed_by_an_initializer_hook_train_evaluate_and_predict(tmp_path):
    est = estimator.Estimator(_model_fn, model_dir=str(tmp_path))
    input_fn, hook = _inputs(repeat=True)
    est.train(input_fn, steps=5, hooks=[hook])
    assert est.get_variable_value("global_step") == 5
    input_fn, hook = _inputs(repeat=False)
    metrics = est.evaluate(input_fn, hooks=[hook])
    assert np.isclose(metrics["n"], Y.mean())  # all 3 batches, then the input's end
    input_fn, hook = _inputs(repeat=False)
    assert len(list(est.predict(input_fn, hooks=[hook]))) == 12


def test_without_its_hook_the_iterator_is_named_as_uninitialized(tmp_path):
    est = estimator.Estimator(_model_fn, model_dir=str(tmp_path))
    input_fn, _ = _inputs(repeat=True)
    # Raised in the input's generator: tf.data hands it on as an op error, message kept.
    with pytest.raises((RuntimeError, tf.errors.OpError), match="not initialized.*that hook"):
        est.train(input_fn, steps=2)
