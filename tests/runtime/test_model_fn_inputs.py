"""The containers a model_fn receives are its own, as 2.15's `get_next()` gave them: a
model_fn may `update()` or `pop()` its features and labels dicts (TF-Ranking does) in every
mode, and the next call still sees the input_fn's element whole."""

import numpy as np
import tensorflow.compat.v1 as tf

import keras_estimator as estimator
from keras_estimator.runtime.model_fn_call import fresh_containers


def test_fresh_containers_copies_every_container_and_keeps_the_tensors():
    x, y = tf.constant([1.0]), tf.constant([2.0])
    structure = {"a": x, "nested": {"b": [y, (x,)]}}
    copied = fresh_containers(structure)
    assert copied is not structure and copied["nested"] is not structure["nested"]
    assert copied["nested"]["b"] is not structure["nested"]["b"]
    assert copied["a"] is x and copied["nested"]["b"][0] is y and copied["nested"]["b"][1][0] is x
    assert list(copied) == ["a", "nested"]
    assert fresh_containers(x) is x and fresh_containers(None) is None


def _input_fn():
    rng = np.random.RandomState(0)
    x = rng.randn(64, 3).astype("float32")
    features = {"x": x, "label": (x[:, 0] > 0).astype("float32")}
    labels = {"y": (x[:, 0] > 0).astype("float32"), "w": np.ones(64, "float32")}
    return tf.data.Dataset.from_tensor_slices((features, labels)).batch(16)


def _editing_model_fn(features, labels, mode):
    # What legacy model_fns do to their inputs: take the label out, add derived features.
    assert sorted(features) == ["label", "x"], sorted(features)
    label = features.pop("label")
    features.update({"x2": features["x"] * 2.0})
    logits = tf.layers.dense(tf.concat([features["x"], features["x2"]], 1), 1)[:, 0]
    if mode == estimator.ModeKeys.PREDICT:
        return estimator.EstimatorSpec(mode, predictions={"logits": logits, "label": label})
    weights = labels.pop("w")
    labels["extra"] = weights
    loss = tf.losses.sigmoid_cross_entropy(labels["y"], logits, weights=weights)
    if mode == estimator.ModeKeys.EVAL:
        return estimator.EstimatorSpec(mode, loss=loss)
    train_op = tf.train.GradientDescentOptimizer(0.5).minimize(loss, tf.train.get_global_step())
    return estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def test_a_model_fn_may_edit_its_features_and_labels_in_every_mode(tmp_path):
    est = estimator.Estimator(_editing_model_fn, model_dir=str(tmp_path))
    est.train(_input_fn, steps=4)
    est.train(_input_fn, steps=4)  # a second call: the element is whole again
    metrics = est.evaluate(_input_fn)
    assert metrics["global_step"] == 8 and np.isfinite(metrics["loss"])
    predictions = list(est.predict(lambda: _input_fn().map(lambda features, labels: features)))
    assert len(predictions) == 64 and set(predictions[0]) == {"logits", "label"}


def test_fresh_containers_keeps_mixed_keys_and_container_kinds():
    import collections

    point = collections.namedtuple("Point", "a b")
    x = tf.constant(1.0)
    structure = collections.OrderedDict([(1, x), ("s", point(x, [x]))])
    copied = fresh_containers(structure)
    assert isinstance(copied, collections.OrderedDict) and list(copied) == [1, "s"]
    assert isinstance(copied["s"], point) and copied["s"] is not structure["s"]
    assert copied["s"].b is not structure["s"].b and copied["s"].b[0] is x


def test_a_train_op_adding_more_than_one_stops_where_2_15_stopped(tmp_path):
    """tf.group(minimize(loss, step), assign_add(step, 2)): 2.15.1 stopped at global step 60
    for max_steps=60 and at 72 for steps=10 after it (its first step reaching the target)."""

    def model_fn(features, labels, mode):
        w = tf.get_variable("w", [3, 1])
        loss = tf.reduce_mean(tf.matmul(features["x"], w))
        step = tf.train.get_global_step()
        minimize = tf.train.GradientDescentOptimizer(0.01).minimize(loss, step)
        train_op = tf.group(minimize, tf.assign_add(step, 2))
        return estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

    est = estimator.Estimator(model_fn, model_dir=str(tmp_path))
    est.train(lambda: _input_fn().repeat(), max_steps=60)
    assert est.get_variable_value("global_step") == 60
    est.train(lambda: _input_fn().repeat(), steps=10)
    assert est.get_variable_value("global_step") == 72
