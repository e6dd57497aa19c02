"""tf.compat.v1.layers on Keras 3: TF1 names, shapes, numerics, reuse, training flags."""

import numpy as np
import pytest
import tensorflow as tf

from keras_estimator.compat import install_v1_layers
from keras_estimator.compat import layers as ke_layers

# What the first Estimator (or keras_estimator.install()) does; importing does not.
install_v1_layers()
v1 = tf.compat.v1


def run_graph(build):
    """Builds in a fresh TF1 graph, initialises variables, returns (fetched, variables)."""
    with tf.Graph().as_default():
        fetches = build()
        names = {v.op.name: v for v in v1.global_variables()}
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())
            values = sess.run(fetches)
            var_values = sess.run(names)
    return values, var_values


def test_reachable_as_tf_compat_v1_layers_without_tf_keras():
    import tensorflow.compat.v1 as tf1

    assert tf1.layers.dense is ke_layers.dense
    assert v1.layers.Dense is ke_layers.Dense
    assert v1.layers.batch_normalization is ke_layers.batch_normalization
    for name in [
        "dense",
        "dropout",
        "flatten",
        "conv1d",
        "conv2d",
        "conv3d",
        "conv2d_transpose",
        "separable_conv2d",
        "max_pooling1d",
        "max_pooling2d",
        "average_pooling1d",
        "average_pooling2d",
        "batch_normalization",
        "Conv2D",
        "MaxPooling2D",
        "Flatten",
        "Dropout",
        "BatchNormalization",
        "Layer",
    ]:
        assert callable(getattr(tf1.layers, name)), name


def test_dense_names_numerics_and_default_uniquification():
    x_np = np.arange(6, dtype=np.float32).reshape(2, 3)

    def build():
        x = tf.constant(x_np)
        a = v1.layers.dense(
            x,
            4,
            kernel_initializer=v1.ones_initializer(),
            bias_initializer=v1.constant_initializer(0.5),
        )
        b = v1.layers.dense(a, 2, activation=tf.nn.relu, use_bias=False)
        with v1.variable_scope("tower"):
            c = v1.layers.dense(x, 1, name="head")
        return a, b, c

    (a, _, c), variables = run_graph(build)
    assert set(variables) == {
        "dense/kernel",
        "dense/bias",
        "dense_1/kernel",
        "tower/head/kernel",
        "tower/head/bias",
    }
    np.testing.assert_allclose(a, x_np.sum(1, keepdims=True) * np.ones((1, 4)) + 0.5)
    assert c.shape == (2, 1)


def test_dense_reuse_by_name_and_class_form_shares_variables():
    def build():
        x = tf.ones([2, 3])
        y1 = v1.layers.dense(x, 2, name="fc")
        y2 = v1.layers.dense(x, 2, name="fc", reuse=True)
        layer = v1.layers.Dense(2, name="shared")
        z1, z2 = layer(x), layer(x * 2.0)
        assert len(layer.trainable_variables) == 2
        return y1 - y2, z1, z2

    (diff, z1, z2), variables = run_graph(build)
    assert set(variables) == {"fc/kernel", "fc/bias", "shared/kernel", "shared/bias"}
    np.testing.assert_allclose(diff, 0.0)


def test_dense_name_clash_without_reuse_raises_like_tf1():
    with tf.Graph().as_default():
        x = tf.ones([2, 3])
        v1.layers.dense(x, 2, name="fc")
        with pytest.raises(ValueError, match="already exists"):
            v1.layers.dense(x, 2, name="fc")


def test_dropout_honours_training_flag_python_and_tensor():
    def build():
        x = tf.ones([1000, 10])
        training = v1.placeholder_with_default(True, [])
        return (
            v1.layers.dropout(x, 0.5, training=False),
            v1.layers.dropout(x, 0.5, training=True),
            v1.layers.dropout(x, 0.5, training=training),
        )

    (off, on, dynamic), _ = run_graph(build)
    np.testing.assert_allclose(off, 1.0)
    for out in (on, dynamic):
        assert 0.4 < np.mean(out == 0) < 0.6
        np.testing.assert_allclose(out[out != 0], 2.0)


def test_conv_pooling_flatten_shapes_and_names():
    def build():
        img = tf.ones([2, 8, 8, 3])
        c1 = v1.layers.conv2d(img, 4, 3, padding="same", activation=tf.nn.relu)
        p1 = v1.layers.max_pooling2d(c1, 2, 2)
        a1 = v1.layers.average_pooling2d(c1, 2, 2, padding="same")
        t1 = v1.layers.conv2d_transpose(p1, 5, 3, strides=2, padding="same")
        s1 = v1.layers.separable_conv2d(img, 6, 3, depth_multiplier=2)
        seq = tf.ones([2, 10, 3])
        c1d = v1.layers.conv1d(seq, 7, 3)
        m1d = v1.layers.max_pooling1d(c1d, 2, 2)
        av1d = v1.layers.average_pooling1d(c1d, 2, 2)
        vol = tf.ones([1, 4, 4, 4, 2])
        c3d = v1.layers.conv3d(vol, 3, 2)
        flat = v1.layers.flatten(p1)
        return c1, p1, a1, t1, s1, c1d, m1d, av1d, c3d, flat

    outs, variables = run_graph(build)
    shapes = [o.shape for o in outs]
    assert shapes == [
        (2, 8, 8, 4),
        (2, 4, 4, 4),
        (2, 4, 4, 4),
        (2, 8, 8, 5),
        (2, 6, 6, 6),
        (2, 8, 7),
        (2, 4, 7),
        (2, 4, 7),
        (1, 3, 3, 3, 3),
        (2, 64),
    ]
    assert variables["conv2d/kernel"].shape == (3, 3, 3, 4)
    assert variables["conv2d_transpose/kernel"].shape == (3, 3, 5, 4)
    assert variables["separable_conv2d/depthwise_kernel"].shape == (3, 3, 3, 2)
    assert variables["separable_conv2d/pointwise_kernel"].shape == (1, 1, 6, 6)
    assert {"conv1d/kernel", "conv3d/kernel", "conv2d/bias", "separable_conv2d/bias"} <= set(
        variables
    )


def test_conv2d_matches_a_hand_computed_convolution():
    rng = np.random.RandomState(0)
    img = rng.randn(1, 5, 5, 2).astype(np.float32)
    kernel = rng.randn(3, 3, 2, 1).astype(np.float32)

    def build():
        return v1.layers.conv2d(
            tf.constant(img), 1, 3, kernel_initializer=v1.constant_initializer(kernel)
        )

    out, _ = run_graph(build)
    expected = np.zeros((3, 3))
    for i in range(3):
        for j in range(3):
            expected[i, j] = np.sum(img[0, i : i + 3, j : j + 3, :] * kernel[..., 0])
    np.testing.assert_allclose(out[0, :, :, 0], expected, rtol=1e-5, atol=1e-5)


def test_batch_normalization_training_inference_and_update_ops():
    x_np = np.array([[1.0, 10.0], [3.0, 30.0]], np.float32)

    def build():
        x = tf.constant(x_np)
        train_out = v1.layers.batch_normalization(x, training=True, momentum=0.9, name="bn")
        updates = v1.get_collection(v1.GraphKeys.UPDATE_OPS)
        assert len(updates) == 2
        with tf.control_dependencies(updates):
            infer_out = v1.layers.batch_normalization(x, training=False, name="bn", reuse=True)
        return train_out, infer_out

    (train_out, infer_out), variables = run_graph(build)
    assert set(variables) == {"bn/gamma", "bn/beta", "bn/moving_mean", "bn/moving_variance"}
    # batch statistics: mean [2, 20], variance [1, 100] -> outputs -1 / +1 (up to epsilon)
    np.testing.assert_allclose(train_out, [[-1, -1], [1, 1]], atol=1e-3)
    np.testing.assert_allclose(variables["bn/moving_mean"], [0.2, 2.0], rtol=1e-5)
    np.testing.assert_allclose(variables["bn/moving_variance"], [1.0, 10.9], rtol=1e-5)
    # inference uses the moving statistics
    expected = (x_np - [0.2, 2.0]) / np.sqrt(np.array([1.0, 10.9]) + 1e-3)
    np.testing.assert_allclose(infer_out, expected, rtol=1e-4)


def test_regularizers_land_in_regularization_losses():
    def build():
        x = tf.ones([2, 3])
        v1.layers.dense(
            x,
            2,
            kernel_initializer=v1.ones_initializer(),
            kernel_regularizer=lambda w: tf.reduce_sum(w),
            activity_regularizer=lambda a: tf.reduce_sum(a) * 0.0 + 1.0,
        )
        return v1.losses.get_regularization_loss()

    total, _ = run_graph(build)
    assert total == pytest.approx(6.0 + 1.0)


BN_INPUT_4D = np.random.RandomState(0).randn(4, 3, 3, 2).astype("float32") * 3 + 1


def one_batch_normalization_step(**kwargs):
    """(|outputs| summed, moving_variance) after one training step on BN_INPUT_4D."""

    def build():
        out = v1.layers.batch_normalization(
            tf.constant(BN_INPUT_4D), training=True, momentum=0.5, **kwargs
        )
        with tf.control_dependencies(v1.get_collection(v1.GraphKeys.UPDATE_OPS)):
            return tf.identity(out)

    out, variables = run_graph(build)
    return np.abs(out).sum(), variables["batch_normalization/moving_variance"]


def test_batch_normalization_4d_matches_values_recorded_on_tf_2_15():
    """TF1 used the fused kernel for 4-D inputs: unbiased variance in the moving average.

    The expected numbers were produced by this same graph on TF 2.15.1.
    """
    total, moving_variance = one_batch_normalization_step()
    assert total == pytest.approx(56.877037, rel=1e-5)
    np.testing.assert_allclose(moving_variance, [6.1598921, 4.6619635], rtol=1e-5)


def test_batch_normalization_fused_false_moves_towards_the_biased_variance_as_tf_2_15():
    """`fused=False` on a 4-D input: TF1's unfused graph, the biased batch variance in the
    moving average (TF 2.15.1 gave [6.002672, 4.5463533]: 0.5 * 1 + 0.5 * var(x))."""
    total, moving_variance = one_batch_normalization_step(fused=False)
    assert total == pytest.approx(56.877037, rel=1e-5)
    np.testing.assert_allclose(moving_variance, [6.002672, 4.5463533], rtol=1e-5)
    biased = BN_INPUT_4D.reshape(-1, 2).var(axis=0)
    np.testing.assert_allclose(moving_variance, 0.5 + 0.5 * biased, rtol=1e-5)


def test_tf1_positional_argument_orders():
    def build():
        img = tf.ones([2, 6, 6, 3])
        # separable_conv2d(inputs, filters, kernel_size, strides, padding, ...)
        a = v1.layers.separable_conv2d(img, 4, 3, 2, "same")
        b = v1.layers.SeparableConv2D(4, 3, (2, 2), "same")(img)
        # conv2d_transpose(inputs, filters, kernel_size, strides, padding, data_format, activation)
        c = v1.layers.conv2d_transpose(img, 2, 3, 1, "same", "channels_last", tf.nn.relu)
        return a, b, c

    (a, b, c), _ = run_graph(build)
    assert a.shape == (2, 3, 3, 4) and b.shape == (2, 3, 3, 4)
    assert c.shape == (2, 6, 6, 2) and (c >= 0).all()
