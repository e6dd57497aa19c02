"""Checkpoints written by tf.estimator 2.15's canned estimators (a committed fixture, see
fixtures/canned_tf_estimator_2_15/make_fixture.py) evaluate, predict and resume here."""

import json
import os
import shutil

import numpy as np
import pytest
import tensorflow as tf
from helpers import FIXTURES, assert_predictions_match, iris_columns, iris_features, iris_like

from keras_estimator import canned

FIXTURE = os.path.join(FIXTURES, "canned_tf_estimator_2_15")


CASES = {
    "dnn": (lambda d: canned.DNNClassifier([10, 10], iris_columns(), d, n_classes=3), lambda y: y),
    "linear": (lambda d: canned.LinearClassifier(iris_columns(), d, n_classes=3), lambda y: y),
    "dnn_binary": (
        lambda d: canned.DNNClassifier([10, 10], iris_columns(), d, n_classes=2),
        lambda y: (y == 0).astype(np.int64),
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_tf_estimator_checkpoint_evaluates_predicts_and_resumes(tmp_path, name):
    make, labels_of = CASES[name]
    model_dir = str(tmp_path / name)
    shutil.copytree(os.path.join(FIXTURE, f"{name}_model"), model_dir)
    x, y = iris_like()
    labels = labels_of(y)
    est = make(model_dir)

    got = est.evaluate(
        lambda: tf.data.Dataset.from_tensor_slices((iris_features(x), labels)).batch(150), steps=1
    )
    with open(os.path.join(FIXTURE, f"{name}_expected_metrics.json")) as f:
        want = json.load(f)
    assert sorted(got) == sorted(want)  # the same metric keys as tf.estimator reported
    for key, value in want.items():
        assert float(got[key]) == pytest.approx(value, rel=1e-5, abs=1e-6), key

    predictions = list(
        est.predict(lambda: tf.data.Dataset.from_tensor_slices(iris_features(x[:5])).batch(5))
    )
    with open(os.path.join(FIXTURE, f"{name}_expected_predictions.json")) as f:
        expected = json.load(f)
    assert_predictions_match(predictions, expected)

    # Training resumes from the 2.15 checkpoint, optimizer slots included.
    est.train(
        lambda: tf.data.Dataset.from_tensor_slices((iris_features(x), labels)).repeat().batch(32),
        steps=10,
    )
    assert est.get_variable_value("global_step") == 210
    assert est.get_variable_names() == [
        n for n, _ in tf.train.list_variables(os.path.join(FIXTURE, f"{name}_model"))
    ]
