"""Keras layers of a class whose name starts with `_` (DeepCTR's `_Add`), called in a
model_fn outside any model: named as tf.keras 2 named them (`private__add`; 2.15.1's
checkpoint holds `private__my_dense/kernel`), which TensorFlow accepts as a root scope."""

import keras
import numpy as np
import tensorflow.compat.v1 as tf

import keras_estimator as estimator
from keras_estimator.seam.internals import keras2_private_layer_names


class _Add(keras.layers.Layer):
    def call(self, inputs):
        return keras.layers.Add()(inputs)


class _MyDense(keras.layers.Dense):
    pass


def _model_fn(features, labels, mode):
    x = _Add()([features["x"], features["x"]])
    logits = _MyDense(1)(x)[:, 0]
    loss = tf.losses.sigmoid_cross_entropy(labels, logits)
    train_op = tf.train.AdamOptimizer(0.1).minimize(loss, tf.train.get_global_step())
    return estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def _input_fn():
    x = np.random.RandomState(0).rand(16, 3).astype("float32")
    return tf.data.Dataset.from_tensor_slices(({"x": x}, (x[:, 0] > 0.5).astype("float32"))).batch(
        8
    )


def test_private_layer_classes_train_under_tf_keras_2_names(tmp_path):
    est = estimator.Estimator(_model_fn, model_dir=str(tmp_path))
    est.train(_input_fn, steps=2)
    assert "private__my_dense/kernel" in est.get_variable_names()


def test_keras2_private_layer_names_only_prefixes_private_classes():
    with keras2_private_layer_names():
        assert _Add().name.startswith("private__add") and keras.layers.Dense(1).name[:5] == "dense"
    assert _Add().name.startswith("__add")  # Keras 3's own naming outside
