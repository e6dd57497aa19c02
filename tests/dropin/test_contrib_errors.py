"""What install()'s tf.contrib does not provide raises an error naming the replacement, and
the support table (read by `keras-estimator check`) says exactly what is provided."""

import importlib

import pytest
import tensorflow as tf

import keras_estimator as estimator
from keras_estimator.dropin import contrib
from keras_estimator.dropin.contrib import cluster_resolver
from keras_estimator.dropin.contrib.removed import REPLACEMENTS
from keras_estimator.migration import lookup, scan_paths

v1 = tf.compat.v1
PROVIDED_MODULES = ["cluster_resolver", "data", "distribute", "eager", "estimator",
                    "factorization", "framework", "layers", "lookup", "metrics", "rnn", "summary",
                    "training", "tpu"]  # fmt: skip


@pytest.mark.parametrize("module", sorted(set(REPLACEMENTS) - {"factorization", "rnn", "slim"}))
def test_removed_modules_raise_naming_the_replacement(installed, module):
    replacement = REPLACEMENTS[module]
    with pytest.raises(AttributeError) as error:
        getattr(v1.contrib, module)
    assert replacement in str(error.value) and f"tensorflow.contrib.{module}" in str(error.value)
    with pytest.raises(ModuleNotFoundError) as error:
        importlib.import_module(f"tensorflow.contrib.{module}.python.ops")
    assert replacement in str(error.value) and "tf.estimator / keras" not in str(error.value)
    entry = lookup(f"tf.contrib.{module}.anything")
    assert entry["status"] == "unsupported" and entry["replacement"] == replacement


@pytest.mark.parametrize("module", PROVIDED_MODULES)
def test_provided_modules_match_the_support_table(installed, module):
    ours = importlib.import_module(f"keras_estimator.dropin.contrib.{module}")
    assert getattr(v1.contrib, module) is ours
    assert importlib.import_module(f"tensorflow.contrib.{module}") is ours
    assert lookup(f"tf.contrib.{module}")["status"] == "supported"
    for name in ours.__all__:
        assert getattr(ours, name) is not None
        assert lookup(f"tf.contrib.{module}.{name}")["status"] in ("supported", "caveat"), name
    entry = lookup(f"tf.contrib.{module}.not_provided_here")
    assert entry["status"] == "unsupported" and entry["replacement"]
    with pytest.raises(AttributeError, match="not_provided_here is not provided.*Fix: use"):
        _ = ours.not_provided_here


def test_tpu_module_paths_import_as_ours(installed):
    from tensorflow.contrib.tpu.python.tpu import tpu_config, tpu_estimator

    assert tpu_config.RunConfig is estimator.tpu.RunConfig
    assert tpu_config.InputPipelineConfig is estimator.tpu.InputPipelineConfig
    assert tpu_estimator.TPUEstimator is estimator.tpu.TPUEstimator
    assert tpu_estimator.TPUEstimatorSpec is estimator.tpu.TPUEstimatorSpec
    assert lookup("tf.contrib.tpu.python.tpu.tpu_config.RunConfig")["status"] == "caveat"
    assert lookup("tf.contrib.tpu.python.tpu.tpu_estimator")["status"] == "caveat"
    assert lookup("tf.contrib.tpu.python.tpu.async_checkpoint")["status"] == "unsupported"
    with pytest.raises(ModuleNotFoundError, match="tf.estimator.tpu / tf.distribute"):
        importlib.import_module("tensorflow.contrib.tpu.python.tpu.async_checkpoint")


def test_contrib_exists_only_while_installed():
    assert not hasattr(v1, "contrib")
    estimator.install()
    try:
        assert v1.contrib is contrib and sorted(dir(contrib)) == sorted(contrib.PROVIDED)
        assert lookup("tf.contrib")["status"] == "supported"
        assert (
            cluster_resolver.TPUClusterResolver is tf.distribute.cluster_resolver.TPUClusterResolver
        )
        assert cluster_resolver.TFConfigClusterResolver is (
            tf.distribute.cluster_resolver.TFConfigClusterResolver)  # fmt: skip
        assert cluster_resolver.SimpleClusterResolver is (
            tf.distribute.cluster_resolver.SimpleClusterResolver)  # fmt: skip
    finally:
        estimator.uninstall()
    assert not hasattr(v1, "contrib")


def test_check_reports_what_install_provides(tmp_path):
    script = tmp_path / "legacy.py"
    script.write_text(  # the v1 API: on `import tensorflow`, tf.contrib is TF1 mode
        "import tensorflow.compat.v1 as tf\n"
        "from tensorflow.contrib import slim\n"
        "init = tf.contrib.layers.xavier_initializer()\n"
        "hp = tf.contrib.training.HParams(lr=0.1)\n"
        "ds = tf.contrib.data.parallel_interleave(f, cycle_length=2)\n"
        "cell = tf.contrib.rnn.LayerNormBasicLSTMCell(4)\n"
        "tf.contrib.summary.import_event(e)\n"
        "block = tf.contrib.layers.rev_block(f, g)\n"
    )
    found = {f.api: f for f in scan_paths([str(script)])}
    assert found["tf.contrib.slim"].status == "caveat"
    assert found["tf.contrib.layers.xavier_initializer"].status == "supported"
    assert found["tf.contrib.training.HParams"].status == "caveat"
    assert found["tf.contrib.data.parallel_interleave"].status == "supported"
    for api in ("tf.contrib.rnn.LayerNormBasicLSTMCell", "tf.contrib.summary.import_event",
                "tf.contrib.layers.rev_block"):  # fmt: skip
        assert found[api].status == "unsupported" and found[api].replacement, api
