"""Serving / supervised input receivers: what they accept and refuse, as tf.estimator 2.15."""

import re

import pytest
import tensorflow as tf

from keras_estimator import export


class _HasTensor:
    """Like a LabeledTensor: no Tensor itself, but a `.tensor` TensorFlow can convert."""

    def __init__(self, value):
        self.tensor = tf.constant(value)


tf.register_tensor_conversion_function(
    _HasTensor, lambda value, dtype=None, name=None, as_ref=False: value.tensor
)


def _in_graph(fn):
    with tf.Graph().as_default():
        return fn()


def test_features_may_have_int_keys_and_sparse_or_ragged_values():
    def build():
        features = {
            "dense": tf.constant([[1.0]]),
            7: tf.constant([[2.0]]),
            "sparse": tf.sparse.from_dense([[0, 3]]),
            "ragged": tf.ragged.constant([[1], [2, 3]]),
        }
        examples = tf.compat.v1.placeholder(tf.string, [None])
        receiver = export.ServingInputReceiver(features, {"examples": examples})
        assert set(receiver.features) == {"dense", 7, "sparse", "ragged"}
        labels = {3: tf.constant([1])}
        supervised = export.SupervisedInputReceiver(features, labels, examples)
        assert supervised.labels is labels and list(supervised.receiver_tensors) == ["input"]

    _in_graph(build)


def test_an_object_with_a_convertible_tensor_is_kept_as_given():
    feature = _HasTensor([1])
    receiver = export.ServingInputReceiver(feature, tf.constant(["x"]))
    assert receiver.features == {"feature": feature}
    assert export.TensorServingInputReceiver(feature, tf.constant(["x"])).features is feature


@pytest.mark.parametrize(
    "build, message",
    [
        (
            lambda t: export.ServingInputReceiver({2.5: t}, t),
            "feature keys must be strings or ints: 2.5.",
        ),
        (
            lambda t: export.ServingInputReceiver({"x": t}, {1: t}),
            "receiver_tensor keys must be strings: 1.",
        ),
        (
            lambda t: export.ServingInputReceiver({"x": [1.0]}, t),
            "feature x must be a Tensor, SparseTensor, or RaggedTensor.",
        ),
        (
            lambda t: export.ServingInputReceiver({"x": t}, {"r": "serialized"}),
            "receiver_tensor r must be a Tensor, SparseTensor, or RaggedTensor.",
        ),
        (
            lambda t: export.ServingInputReceiver({"x": t}, t, {"alt": {"a": 3}}),
            "receiver_tensors_alternative a must be a Tensor",
        ),
        (
            lambda t: export.ServingInputReceiver({"x": t}, None),
            "receiver_tensors must be defined.",
        ),
        (
            lambda t: export.TensorServingInputReceiver({"x": t}, t),
            "feature must be a Tensor, SparseTensor, or RaggedTensor.",
        ),
        (
            lambda t: export.TensorServingInputReceiver(t, {0: t}),
            "receiver_tensor keys must be strings: 0.",
        ),
        (
            lambda t: export.SupervisedInputReceiver({"x": t}, {1.5: t}, t),
            "label keys must be strings or ints: 1.5.",
        ),
    ],
)
def test_refusals_start_with_2_15s_message(build, message):
    with pytest.raises(ValueError, match=re.escape(message)) as info:
        build(tf.constant([1.0]))
    text = str(info.value)
    assert text.startswith(message) and "Fix:" in text and "Received:" in text
