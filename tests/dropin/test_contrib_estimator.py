"""`tf.contrib.estimator.boosted_trees_*_train_in_memory` under install(): trains on the whole
in-memory dataset (one element, not batched) and returns the trained estimator; `check`
reports them (and tf.estimator.BoostedTrees*) as supported."""

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as estimator
from keras_estimator.migration import lookup

v1 = tf.compat.v1


def in_memory(y):
    x = np.random.RandomState(0).uniform(-1, 1, (400, 2)).astype("float32")
    return x, lambda: tf.data.Dataset.from_tensors(({"a": x[:, 0], "b": x[:, 1]}, y(x)))


COLUMNS = [tf.feature_column.numeric_column("a"), tf.feature_column.numeric_column("b")]


def test_classifier_train_in_memory(installed, tmp_path):
    x, input_fn = in_memory(lambda x: (x[:, 0] * x[:, 1] > 0).astype("int32"))
    est = v1.contrib.estimator.boosted_trees_classifier_train_in_memory(
        input_fn, COLUMNS, model_dir=str(tmp_path), n_trees=5, max_depth=3, learning_rate=0.5
    )
    assert isinstance(est, estimator.BoostedTreesClassifier)
    # One quantile step, then one layer per step: 5 trees x 3 layers.
    assert est.get_variable_value("global_step") == 1 + 15
    assert est.evaluate(input_fn, steps=1)["accuracy"] >= 0.9


def test_regressor_train_in_memory_from_the_import_path(installed, tmp_path):
    from tensorflow.contrib.estimator import boosted_trees_regressor_train_in_memory

    x, input_fn = in_memory(lambda x: (x[:, 0] ** 2).astype("float32"))
    est = boosted_trees_regressor_train_in_memory(
        input_fn, COLUMNS, model_dir=str(tmp_path), n_trees=5, max_depth=2, learning_rate=0.5
    )
    assert isinstance(est, estimator.BoostedTreesRegressor)
    assert est.evaluate(input_fn, steps=1)["average_loss"] < 0.01


def test_the_rest_of_contrib_estimator_names_its_replacement(installed):
    with pytest.raises(AttributeError, match="tf.estimator.experimental"):
        _ = v1.contrib.estimator.stop_if_no_increase_hook
    assert lookup("tf.contrib.estimator.stop_if_no_increase_hook")["status"] == "unsupported"


@pytest.mark.parametrize("api", [
    "tf.estimator.BoostedTreesClassifier", "tf.estimator.BoostedTreesRegressor",
    "tf.estimator.BoostedTreesEstimator", "tf.contrib.estimator",
    "tf.contrib.estimator.boosted_trees_classifier_train_in_memory",
    "tf.contrib.estimator.boosted_trees_regressor_train_in_memory",
])  # fmt: skip
def test_check_reports_boosted_trees_as_supported(api):
    assert lookup(api)["status"] == "supported"


def test_install_maps_the_tf_estimator_names(installed):
    for name in ("BoostedTreesClassifier", "BoostedTreesRegressor", "BoostedTreesEstimator"):
        assert getattr(tf.estimator, name) is getattr(estimator, name)
        assert getattr(v1.estimator, name) is getattr(estimator, name)  # one class, as in 2.8
