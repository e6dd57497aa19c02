"""Columns reading one raw key in different ways train, as tf.estimator 2.15 accepted:
`numeric_column("age")` with a `crossed_column(["age", ...])` (which reads `age` as a
string) and a bucketized column of it. Only `make_parse_example_spec` over all of them
refuses, as in 2.15."""

import numpy as np
import pytest
import tensorflow as tf2
import tensorflow.compat.v1 as tf

import keras_estimator as estimator
from keras_estimator.canned.feature_inputs import feature_keys

fc = tf2.feature_column


def _columns():
    age = fc.numeric_column("age")
    education = fc.categorical_column_with_vocabulary_list("education", ["a", "b"])
    return [age, fc.bucketized_column(age, [30, 50]), fc.crossed_column(["age", "education"], 10),
            education]  # fmt: skip


def _input_fn():
    features = {
        "age": tf.constant([[20], [40], [60], [35]], tf.int64),
        "education": tf.constant([["a"], ["b"], ["a"], ["b"]]),
    }
    return tf.data.Dataset.from_tensors((features, tf.constant([[0], [1], [1], [0]]))).repeat()


def test_one_key_read_two_ways_trains_evaluates_and_predicts(tmp_path):
    columns = _columns()
    assert feature_keys(columns) == ["age", "education"]
    est = estimator.LinearClassifier(columns, model_dir=str(tmp_path))
    est.train(_input_fn, steps=2)
    result = est.evaluate(_input_fn, steps=1)
    # tensorflow-estimator 2.15 on the same columns and data: loss 0.5246592 after 2 steps
    np.testing.assert_allclose(result["loss"], 0.5246592, rtol=1e-5)
    assert len(list(est.predict(lambda: _input_fn().map(lambda f, _: f).take(1)))) == 4


def test_make_parse_example_spec_still_refuses_the_combination_as_2_15():
    with pytest.raises(ValueError, match="different parse_spec for key age"):
        estimator.classifier_parse_example_spec(_columns(), label_key="label")


def test_a_missing_key_is_still_named():
    est = estimator.LinearClassifier(_columns())

    def input_fn():
        features = {"age": tf.constant([[20.0]])}
        return tf.data.Dataset.from_tensors((features, tf.constant([[0]])))

    with pytest.raises(ValueError, match="Feature education is not in features dictionary"):
        est.train(input_fn, steps=1)
