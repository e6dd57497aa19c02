"""A model_dir written by the original tf.estimator 2.15 evaluates, predicts and resumes.

The fixture (tests/fixtures/tf215_model_dir) was written by make_tf215_fixture.py under
TensorFlow 2.15.1 + tensorflow-estimator 2.15.0, with the very same model_fn.
"""

import json
import os
import shutil
import sys

import numpy as np
import pytest
import tensorflow.compat.v1 as tf
from helpers import FIXTURES, make_estimator

import keras_estimator as estimator

sys.path.insert(0, FIXTURES)
from legacy_model import STEPS, input_fns, make_model_fn  # noqa: E402


@pytest.fixture
def tf215_dir(tmp_path):
    target = tmp_path / "model_dir"
    shutil.copytree(os.path.join(FIXTURES, "tf215_model_dir"), target)
    with open(target / "expected.json") as f:
        expected = json.load(f)
    return str(target), expected


def legacy_estimator(model_dir):
    """The fixture's model_fn (the one tf.estimator 2.15 trained) in `model_dir`."""
    return make_estimator(model_dir, make_model_fn(estimator, tf), params={"hidden": 8})


def test_same_variable_names_as_tf_estimator_2_15(tf215_dir, tmp_path):
    model_dir, expected = tf215_dir
    train, _, _ = input_fns(tf)
    fresh = legacy_estimator(str(tmp_path / "ours"))
    fresh.train(train, steps=2)
    assert sorted(fresh.get_variable_names()) == expected["variables"]


def test_evaluate_and_predict_match_tf_estimator_2_15(tf215_dir):
    model_dir, expected = tf215_dir
    _, evaluate, predict = input_fns(tf)
    est = legacy_estimator(model_dir)
    metrics = est.evaluate(evaluate)
    assert metrics["global_step"] == STEPS
    assert metrics["accuracy"] == pytest.approx(expected["metrics"]["accuracy"], abs=1e-6)
    assert metrics["loss"] == pytest.approx(expected["metrics"]["loss"], rel=1e-4)
    predictions = list(est.predict(predict))
    assert [int(p["classes"]) for p in predictions] == expected["classes"]
    np.testing.assert_allclose(
        [p["logits"] for p in predictions], expected["logits"], rtol=1e-4, atol=1e-5
    )


def test_training_resumes_from_tf_estimator_2_15_checkpoint(tf215_dir):
    model_dir, expected = tf215_dir
    train, evaluate, _ = input_fns(tf)
    est = legacy_estimator(model_dir)
    est.train(train, steps=10)
    assert est.get_variable_value("global_step") == STEPS + 10
    assert est.evaluate(evaluate)["loss"] < expected["metrics"]["loss"] * 1.5
    assert tf.train.latest_checkpoint(model_dir).endswith(f"model.ckpt-{STEPS + 10}")
