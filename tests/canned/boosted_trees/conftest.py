"""BoostedTrees estimators trained once for the tests of this folder."""

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # bt_data, before test files load
from bt_data import N_TEST, N_TRAIN, columns, table, train_input  # noqa: E402

import keras_estimator as estimator  # noqa: E402


@pytest.fixture(scope="session")
def data():
    train, test = table(0, N_TRAIN), table(1, N_TEST)
    return {"train": train, "test": test}


@pytest.fixture(scope="session")
def classifier(data, tmp_path_factory):
    x, y, _ = data["train"]
    est = estimator.BoostedTreesClassifier(
        columns(), n_batches_per_layer=2, model_dir=str(tmp_path_factory.mktemp("bt_clf")),
        n_trees=10, max_depth=3, learning_rate=0.3, center_bias=True,
    )  # fmt: skip
    est.train(train_input(x, y))  # no steps: it stops once the trees are grown
    return est


@pytest.fixture(scope="session")
def regressor(data, tmp_path_factory):
    x, _, target = data["train"]
    est = estimator.BoostedTreesRegressor(
        columns(), n_batches_per_layer=2, model_dir=str(tmp_path_factory.mktemp("bt_reg")),
        n_trees=20, max_depth=3, learning_rate=0.3, center_bias=True,
    )  # fmt: skip
    est.train(train_input(x, target))
    return est
