"""Small model_fns and input_fns shared by the tests (legacy TF1 style)."""

import numpy as np
import tensorflow.compat.v1 as tf

import keras_estimator as estimator


def dataset_input_fn(x, y=None, batch_size=32, repeat=False, shuffle=False):
    def input_fn():
        features = {"x": x}
        ds = tf.data.Dataset.from_tensor_slices((features, y) if y is not None else features)
        if shuffle:
            ds = ds.shuffle(len(x), seed=1)
        if repeat:
            ds = ds.repeat()
        return ds.batch(batch_size)

    return input_fn


def classifier_model_fn(features, labels, mode, params):
    """The issue's example: dense + dropout + dense, Adam, accuracy."""
    net = tf.layers.dense(features["x"], params.get("hidden", 16), activation=tf.nn.relu)
    net = tf.layers.dropout(net, 0.2, training=mode == estimator.ModeKeys.TRAIN)
    logits = tf.layers.dense(net, params.get("n_classes", 3))
    if mode == estimator.ModeKeys.PREDICT:
        return estimator.EstimatorSpec(
            mode,
            predictions={"classes": tf.argmax(logits, 1), "probabilities": tf.nn.softmax(logits)},
        )
    loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
    if mode == estimator.ModeKeys.EVAL:
        return estimator.EstimatorSpec(
            mode,
            loss=loss,
            eval_metric_ops={"accuracy": tf.metrics.accuracy(labels, tf.argmax(logits, 1))},
        )
    train_op = tf.train.AdamOptimizer(params.get("lr", 0.01)).minimize(
        loss, global_step=tf.train.get_global_step()
    )
    return estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def accuracy_np(est, x, y, batch_size=64):
    preds = est.predict(dataset_input_fn(x, batch_size=batch_size), predict_keys="classes")
    return float(np.mean(np.array([p["classes"] for p in preds]) == y))
