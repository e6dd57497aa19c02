"""tf.estimator 2.15's module tree after `install()`: every module of the generated list
(tests/fixtures/module_tree, made from a 2.15 venv) imports under both roots, with every
public name and nearly every private class; the finder's aliasing and uninstall."""

import importlib
import json
import os
import sys

import pytest
import tensorflow as tf
from helpers import FIXTURES

import keras_estimator as estimator

TREE = os.path.join(FIXTURES, "module_tree", "tf_estimator_2_15_modules.json")
PREFIX = "tensorflow_estimator.python.estimator"
# TF 2.15's own tensorflow.python.estimator.* forwarded these suffixes to tensorflow_estimator.
TF_FORWARDS = {
    "canned", "canned.baseline", "canned.dnn", "canned.dnn_linear_combined", "canned.head",
    "canned.linear", "canned.metric_keys", "canned.optimizers", "canned.parsing_utils",
    "canned.prediction_keys", "estimator", "estimator_lib", "export", "export.export",
    "export.export_lib", "export.export_output", "exporter", "gc", "inputs", "inputs.inputs",
    "inputs.numpy_io", "inputs.pandas_io", "inputs.queues", "inputs.queues.feeding_functions",
    "inputs.queues.feeding_queue_runner", "model_fn", "run_config", "training", "util",
}  # fmt: skip


def _modules():
    """{legacy module name: the names 2.15's module defined} under both roots."""
    with open(TREE) as f:
        tree = json.load(f)
    kept = {
        name: names
        for name, names in tree.items()
        if name.startswith(PREFIX) and "testing_util" not in name and "._api" not in name
    }
    for suffix in TF_FORWARDS:
        kept[f"tensorflow.python.estimator.{suffix}"] = tree[f"{PREFIX}.{suffix}"]
    return kept


@pytest.fixture
def installed():
    estimator.install()
    yield
    estimator.uninstall()


def _kind(name):
    if not name.startswith("_"):
        return "public"
    return "private classes" if name.lstrip("_")[:1].isupper() else "private functions"


def test_every_module_of_2_15s_tree_imports_with_its_public_names(installed):
    counts = {"public": [0, 0], "private classes": [0, 0], "private functions": [0, 0]}
    missing_public = []
    for name, names in sorted(_modules().items()):
        module = importlib.import_module(name)  # raises for a module we do not provide
        for attr in names:
            found = hasattr(module, attr)
            counts[_kind(attr)][0] += found
            counts[_kind(attr)][1] += 1
            if not found and _kind(attr) == "public":
                missing_public.append(f"{name}.{attr}")
    print({k: f"{a}/{b}" for k, (a, b) in counts.items()})  # the figure, with -s
    assert not missing_public
    found_classes, all_classes = counts["private classes"]
    assert found_classes >= 0.9 * all_classes, counts


def test_a_legacy_module_is_the_mirror_module_under_both_roots(installed):
    from tensorflow.python.estimator.canned import head as tf_head
    from tensorflow_estimator.python.estimator.canned import head

    from keras_estimator.dropin.estimator_tree.canned import head as mirror

    assert head is mirror and tf_head is mirror
    assert importlib.import_module(f"{PREFIX}.canned.head") is mirror
    assert importlib.import_module(PREFIX) is importlib.import_module("tensorflow.python.estimator")


def test_uninstall_removes_the_tree_and_a_module_outside_it_fails_clearly():
    estimator.install()
    try:
        importlib.import_module(f"{PREFIX}.canned.dnn")
        with pytest.raises(ModuleNotFoundError, match="2.15's module tree"):
            importlib.import_module(f"{PREFIX}.canned.no_such_module")
    finally:
        estimator.uninstall()
    assert not [n for n in sys.modules if n.startswith(("tensorflow_estimator", PREFIX))]
    assert not hasattr(sys.modules["tensorflow.python"], "estimator")
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(f"{PREFIX}.canned.dnn")


def test_the_compat_roots_hold_the_two_namespaces(installed):
    from tensorflow_estimator.compat.v1 import estimator as v1_namespace
    from tensorflow_estimator.compat.v2 import estimator as v2_namespace

    assert v1_namespace is estimator.v1 and v2_namespace is estimator


def test_the_modules_hold_2_15s_v1_classes_under_the_plain_names(installed):
    from tensorflow_estimator.python.estimator import estimator as estimator_lib
    from tensorflow_estimator.python.estimator.canned import baseline, dnn, linear, parsing_utils

    assert estimator_lib.Estimator is tf.compat.v1.estimator.Estimator
    assert estimator_lib.EstimatorV2 is tf.estimator.Estimator
    assert dnn.DNNRegressor is estimator.v1.DNNRegressor
    assert linear.LinearClassifierV2 is estimator.LinearClassifier
    assert baseline.BaselineRegressorV2 is estimator.BaselineRegressor
    assert parsing_utils.classifier_parse_example_spec is estimator.v1.classifier_parse_example_spec


def test_a_name_that_cannot_run_here_imports_and_says_what_to_use(installed):
    from tensorflow_estimator.python.estimator.canned.linear import LinearModel

    from keras_estimator.dropin.unavailable import UnavailableError

    with pytest.raises(UnavailableError, match="LinearClassifier"):
        LinearModel(units=1, feature_columns=[])
