"""tf.contrib.slim after install(), through the tf-slim package: our layers under tf-slim's
arg_scope; without tf-slim, an error naming the package to install."""

import sys

import pytest
import tensorflow as tf
import tf_slim

import keras_estimator as estimator
from keras_estimator.dropin.contrib import framework, layers

v1 = tf.compat.v1


def test_slim_is_tf_slim_with_our_layers_and_arg_scope(installed):
    import tensorflow.contrib.slim as slim
    from tensorflow.contrib import slim as same

    assert same is slim and v1.contrib.slim is slim
    assert slim.conv2d is layers.conv2d and slim.batch_norm is layers.batch_norm
    assert slim.l2_regularizer is layers.l2_regularizer
    assert slim.arg_scope is tf_slim.arg_scope and slim.repeat is tf_slim.repeat
    assert framework.arg_scope is tf_slim.arg_scope
    for name in ("add_arg_scope", "arg_scoped_arguments", "has_arg_scope", "current_arg_scope"):
        assert getattr(framework, name) is getattr(tf_slim, name)
    assert framework.has_arg_scope(layers.fully_connected)
    with tf.Graph().as_default():
        images = tf.ones([2, 8, 8, 3])
        with slim.arg_scope([slim.conv2d, slim.fully_connected], activation_fn=None,
                            weights_regularizer=slim.l2_regularizer(0.1)):  # fmt: skip
            with slim.arg_scope([slim.conv2d], padding="VALID"):
                net = slim.repeat(images, 2, slim.conv2d, 4, [3, 3], scope="conv")
            net = slim.max_pool2d(net, [2, 2])
            logits = slim.fully_connected(slim.flatten(net), 5, scope="logits")
        unscoped = slim.conv2d(images, 4, [3, 3])  # defaults again: SAME, relu
        assert net.shape == (2, 2, 2, 4) and logits.shape == (2, 5)  # VALID twice: 8 -> 4
        assert unscoped.shape == (2, 8, 8, 4) and unscoped.op.type == "Relu"
        assert logits.op.type == "BiasAdd"  # activation_fn=None from the scope
        assert [v.op.name for v in slim.get_model_variables()] == [
            "conv/conv_1/weights", "conv/conv_1/biases", "conv/conv_2/weights",
            "conv/conv_2/biases", "logits/weights", "logits/biases", "Conv/weights",
            "Conv/biases"]  # fmt: skip
        assert len(v1.losses.get_regularization_losses()) == 3


def test_without_tf_slim_the_error_names_the_package(monkeypatch):
    monkeypatch.setitem(sys.modules, "tf_slim", None)  # as if tf-slim were not installed
    estimator.install()
    try:
        with pytest.raises(ImportError) as error:
            import tensorflow.contrib.slim  # noqa: F401
        message = str(error.value)
        assert "pip install tf-slim" in message and "keras-estimator[slim]" in message
        assert "tf.estimator" not in message
        with pytest.raises(AttributeError, match="tf-slim"):
            _ = v1.contrib.slim
        with pytest.raises(ImportError, match="tf-slim"):
            _ = framework.arg_scope
    finally:
        estimator.uninstall()


def _png_example() -> bytes:
    pixels = tf.constant([[[10], [20]], [[30], [40]]], tf.uint8)
    feature = {
        "image/encoded": tf.train.Feature(
            bytes_list=tf.train.BytesList(value=[tf.io.encode_png(pixels).numpy()])
        ),
        "image/format": tf.train.Feature(bytes_list=tf.train.BytesList(value=[b"png"])),
    }
    return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()


def test_tf_slim_decodes_images_with_control_flow_ops_cond_and_case(installed):
    from tensorflow.python.ops import control_flow_ops
    from tf_slim.data import tfexample_decoder as slim_decoder

    keys = {
        "image/encoded": v1.FixedLenFeature((), tf.string, default_value=""),
        "image/format": v1.FixedLenFeature((), tf.string, default_value="jpeg"),
    }
    decoder = slim_decoder.TFExampleDecoder(keys, {"image": slim_decoder.Image(channels=1)})
    (image,) = decoder.decode(tf.constant(_png_example()), items=["image"])
    assert image.numpy().ravel().tolist() == [10, 20, 30, 40]
    looped = control_flow_ops.while_loop(lambda i: i < 3, lambda i: i + 1, [tf.constant(0)])
    assert int(looped[0] if isinstance(looped, list) else looped) == 3


def test_without_install_control_flow_ops_has_no_cond_case_while_loop():
    estimator.install()
    estimator.uninstall()
    from tensorflow.python.ops import control_flow_ops

    assert not any(hasattr(control_flow_ops, n) for n in ("cond", "case", "while_loop"))
