"""`keras-estimator check`: the static migration report, and the support table kept honest."""

import json
import os

import pytest
from helpers import ROOT, run_python

from keras_estimator.migration import lookup, scan_paths, support_table

LEGACY_SOURCE = """\
import tensorflow.compat.v1 as tf
import tensorflow_estimator as tfe
from tensorflow.contrib import layers as contrib_layers
from tensorflow_estimator.python.estimator.canned import dnn

def model_fn(features, labels, mode):
    init = contrib_layers.xavier_initializer()
    cell = tf.contrib.rnn.LSTMCell(10)
    net = tf.layers.dense(features["x"], 4, kernel_initializer=init)
    norm = tf.contrib.layers.layer_norm(net)
    if mode == tf.estimator.ModeKeys.TRAIN:
        opt = tf.train.AdamOptimizer(0.1)
    return tf.estimator.EstimatorSpec(mode, loss=tf.losses.mean_squared_error(labels, net))

est = tf.estimator.tpu.TPUEstimator(model_fn, use_tpu=False)
forest = tf.contrib.tensor_forest.RandomForestGraphs(None)
other = dnn.DNNClassifier([4], [])
"""


def by_line(findings):
    return {(f.line, f.api): f for f in findings}


def test_scan_follows_imports_and_reports_status_with_replacements(tmp_path):
    path = tmp_path / "legacy.py"
    path.write_text(LEGACY_SOURCE)
    found = by_line(scan_paths([str(path)]))
    assert found[(2, "tensorflow_estimator")].status == "supported"
    assert found[(3, "tf.contrib.layers")].status == "supported"
    assert found[(4, "tensorflow_estimator")].status == "supported"
    assert found[(7, "tf.contrib.layers.xavier_initializer")].status == "supported"
    assert found[(8, "tf.contrib.rnn.LSTMCell")].status == "supported"
    assert found[(9, "tf.layers.dense")].status == "supported"
    assert found[(10, "tf.contrib.layers.layer_norm")].status == "supported"
    assert found[(11, "tf.estimator.ModeKeys.TRAIN")].status == "supported"
    assert found[(12, "tf.train.AdamOptimizer")].status == "supported"
    assert found[(13, "tf.estimator.EstimatorSpec")].status == "supported"
    assert found[(15, "tf.estimator.tpu.TPUEstimator")].status == "caveat"
    forest = found[(16, "tf.contrib.tensor_forest.RandomForestGraphs")]
    assert forest.status == "unsupported" and "Decision Forests" in forest.replacement
    assert found[(17, "tf.estimator.DNNClassifier")].status == "supported"  # via an alias


def check(*args, cwd=None):
    return run_python(
        "-m", "keras_estimator", "check", *args,
        cwd=cwd, timeout=120, env={"TF_CPP_MIN_LOG_LEVEL": "3"},
    )  # fmt: skip


def test_check_command_text_json_notebooks_and_exit_status(tmp_path):
    bad = tmp_path / "legacy.py"
    bad.write_text(LEGACY_SOURCE)
    good = tmp_path / "good.py"
    good.write_text("import tensorflow.compat.v1 as tf\nest = tf.estimator.Estimator(None)\n")
    result = check(str(good))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "good.py:2: [ok] tf.estimator.Estimator" in result.stdout

    result = check(str(tmp_path), "--format", "json")
    assert result.returncode == 1
    report = json.loads(result.stdout)
    assert report["exit_status"] == 1
    unsupported = {f["api"] for f in report["findings"] if f["status"] == "unsupported"}
    assert unsupported == {"tf.contrib.tensor_forest.RandomForestGraphs"}

    notebook = tmp_path / "nb.ipynb"
    notebook.write_text(json.dumps({"cells": [
        {"cell_type": "markdown", "source": ["tf.contrib.foo"]},
        {"cell_type": "code", "source": ["%matplotlib inline\n", "import tensorflow as tf\n"]},
        {"cell_type": "code", "source": ["tf.contrib.learn.Experiment(x, 3)\n"]},
    ]}))  # fmt: skip
    result = check(str(notebook))
    assert result.returncode == 1
    assert "nb.ipynb:cell 3:1: [UNSUPPORTED] tf.contrib.learn.Experiment" in result.stdout

    missing = check(str(tmp_path / "nope.py"))
    assert missing.returncode == 2 and "No such file" in missing.stderr


def _literal_words(pattern):
    return [word for word in pattern.replace("*", ".").split(".") if word and word != "tf"]


@pytest.mark.parametrize(
    "entry", [e for e in support_table() if e["status"] in ("supported", "caveat")],
    ids=lambda e: e["api"],
)  # fmt: skip
def test_every_supported_api_has_a_test_that_uses_it(entry):
    if entry["status"] == "caveat" and "test" not in entry:
        assert entry.get("note"), entry  # a caveat without a test must say what it is
        return
    test_file = os.path.join(ROOT, entry["test"])
    assert os.path.isfile(test_file), entry
    with open(test_file, encoding="utf-8") as f:
        source = f.read()
    last = _literal_words(entry["api"])[-1]
    assert last in source, f"{entry['test']} does not use {entry['api']}"


def test_unsupported_entries_say_what_to_do_instead():
    for entry in support_table():
        assert entry["status"] in ("supported", "caveat", "unsupported"), entry
        if entry["status"] == "unsupported":
            assert entry.get("replacement"), entry
    assert lookup("tf.estimator.DNNClassifier")["status"] == "supported"
    assert lookup("tf.contrib.nonexistent.thing")["status"] == "unsupported"


def test_scan_survives_odd_files_and_keeps_legacy_chains(tmp_path):
    latin = tmp_path / "latin.py"
    latin.write_bytes(
        b"# -*- coding: latin-1 -*-\n# caf\xe9\nimport tensorflow.compat.v1 as tf\n"
        b"tf.estimator.Estimator\n"
    )
    broken = tmp_path / "broken.ipynb"
    broken.write_text("{not json")
    magic = tmp_path / "magic.ipynb"
    magic.write_text(json.dumps({"cells": [
        {"cell_type": "code", "source": ["import tensorflow as tf\n"]},
        {"cell_type": "code", "source": ["%%bash\n", "echo hi && (\n"]},
        {"cell_type": "code", "source": ["tf.contrib.learn.Experiment(x, 3)\n"]},
    ]}))  # fmt: skip
    chain = tmp_path / "chain.py"
    chain.write_text(
        "from tensorflow_estimator.python.estimator import model_fn as model_fn_lib\n"
        "mode = model_fn_lib.ModeKeys.TRAIN\n"
    )
    found = scan_paths([str(tmp_path)])
    by_file = {}
    for f in found:
        by_file.setdefault(os.path.basename(f.path), []).append(f)
    assert [f.api for f in by_file["latin.py"]] == ["tf.estimator.Estimator"]
    assert by_file["broken.ipynb"][0].status == "error"
    slim = [f for f in by_file["magic.ipynb"] if f.api == "tf.contrib.learn.Experiment"]
    assert slim and slim[0].cell == 3 and slim[0].status == "unsupported"
    modes = [f for f in by_file["chain.py"] if f.api == "tf.estimator.ModeKeys.TRAIN"]
    assert modes and modes[0].status == "supported"
