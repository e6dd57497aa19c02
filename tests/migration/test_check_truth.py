"""`check` tells the truth (issue 19 item 1): which TensorFlow API each file imports, every
TF1-only name on TF 2's `tensorflow`, exactly what install() provides, TF 2 shape `.value`,
tf.Graph() blocks, notebook cells and lines, a verdict per file and a summary."""

import json
import os

from helpers import run_python

from keras_estimator.migration import lookup, scan, support_table
from keras_estimator.migration.report import format_json, format_text


def report_of(tmp_path, source, name="script.py"):
    path = tmp_path / name
    path.write_text(source)
    return next(r for r in scan([str(path)]) if r.path == str(path))


def statuses(report):
    return [(f.line, f.api, f.status) for f in report.findings]


TF1_SCRIPT = """\
import tensorflow as tf
flags = tf.flags
tf.logging.set_verbosity(tf.logging.INFO)
class Opt(tf.train.Optimizer):
    pass
w = tf.get_variable("w", [1])
est = tf.estimator.Estimator(model_fn)
ds = tf.contrib.data.map_and_batch(fn, 2)
ck = tf.train.Checkpoint()
"""


def test_tf1_names_on_a_tf2_import_are_each_reported_as_tf1_mode(tmp_path):
    report = report_of(tmp_path, TF1_SCRIPT)
    assert report.imports == {"v2": ["tf"]}
    assert statuses(report) == [
        (2, "tf.flags", "tf1_mode"),
        (3, "tf.logging.set_verbosity", "tf1_mode"),
        (3, "tf.logging.INFO", "tf1_mode"),
        (4, "tf.train.Optimizer", "tf1_mode"),
        (6, "tf.get_variable", "tf1_mode"),  # no table row: reported all the same
        (7, "tf.estimator.Estimator", "supported"),  # install() adds tf.estimator to TF 2 too
        (8, "tf.contrib.data.map_and_batch", "tf1_mode"),  # tf.contrib is on compat.v1 only
    ]
    assert report.verdict == "tf1_mode"
    assert report.references == 8  # tf.train.Checkpoint counted, TF 2 has it: no finding
    text = format_text([report])
    assert "[TF1 MODE] tf.logging.set_verbosity" in text
    assert "runs under `keras-estimator run` (TF1 mode)" in text
    assert "`import tensorflow.compat.v1 as tf`" in text


def test_the_same_names_on_compat_v1_are_plain_uses(tmp_path):
    source = TF1_SCRIPT.replace("import tensorflow as tf", "import tensorflow.compat.v1 as tf")
    report = report_of(tmp_path, source)
    assert report.imports == {"v1": ["tf"]}
    assert {f.status for f in report.findings} == {"supported"}
    assert report.verdict == "ok"
    aliased = report_of(tmp_path, "from tensorflow.compat import v1 as tf1\ntf1.Session()\n")
    assert aliased.imports == {"v1": ["tf1"]}
    assert statuses(aliased) == [(2, "tf.Session", "unsupported")]  # no session outside a graph


def test_from_imports_and_compat_v2(tmp_path):
    report = report_of(tmp_path, "from tensorflow import logging, flags as f\nlogging.info('x')\n")
    assert statuses(report) == [(1, "tf.logging", "tf1_mode"), (1, "tf.flags", "tf1_mode"),
                                (2, "tf.logging.info", "tf1_mode")]  # fmt: skip
    v2 = report_of(tmp_path, "import tensorflow.compat.v2 as tf\ntf.logging.info('x')\n")
    assert v2.imports == {"compat.v2": ["tf"]}
    assert statuses(v2) == [(2, "tf.logging.info", "unsupported")]  # no TF1 mode for compat.v2


def test_what_install_provides_is_matched_exactly():
    # A member without a row of its own is not covered by its module's row.
    assert lookup("tf.contrib.data.no_such_transformation")["status"] == "unsupported"
    assert lookup("tf.contrib.data.map_and_batch")["status"] == "supported"
    assert lookup("tf.contrib.data")["status"] == "supported"  # the module itself
    assert lookup("tf.contrib.distribute.CollectiveAllReduceStrategy")["status"] == "unsupported"
    assert lookup("tf.estimator.ModeKeys.TRAIN")["api"] == "tf.estimator.ModeKeys"
    assert lookup("tf.layers.dense")["status"] == "supported"
    layers = lookup("tf.layers.embedding")
    assert layers["status"] == "unsupported" and "keras.layers" in layers["replacement"]
    assert lookup("tf.estimator.ProfilerHook")["status"] == "supported"  # keras_estimator has it
    assert lookup("tf.estimator.NoSuchThing")["status"] == "unsupported"


def test_the_layers_row_lists_exactly_the_port():
    from keras_estimator.compat import layers

    (row,) = [e for e in support_table() if e["api"] == "tf.layers.*"]
    assert sorted(row["members"]) == sorted(layers.__all__)
    for name in row["members"]:
        assert hasattr(layers, name), name


def test_shape_value_is_flagged_by_the_shape_semantics_that_apply(tmp_path):
    body = "h = x.shape[-1].value\nd = x.get_shape()[1].value\ne = x.shape.dims[0].value\n"
    v2 = report_of(tmp_path, "import tensorflow as tf\n" + body)
    assert [(f.line, f.status) for f in v2.findings] == [(2, "tf1_mode"), (3, "tf1_mode"),
                                                         (4, "tf1_mode")]  # fmt: skip
    assert "dimension_value" in v2.findings[0].replacement
    v1 = report_of(tmp_path, "import tensorflow.compat.v1 as tf\n" + body)
    assert {f.status for f in v1.findings} == {"unsupported"}  # v1 API, TF 2 shapes
    on = report_of(
        tmp_path, "import tensorflow.compat.v1 as tf\ntf.disable_v2_tensorshape()\n" + body
    )
    assert [f.status for f in on.findings if f.api == "TensorShape[i].value"] == ["supported"] * 3
    other = report_of(tmp_path, "import tensorflow as tf\nv = example.int64_list.value\n")
    assert other.findings == []


def test_a_session_in_a_graph_block_runs_outside_it_does_not(tmp_path):
    source = (
        "import tensorflow.compat.v1 as tf\n"
        "with tf.Graph().as_default():\n"
        "    x = tf.placeholder(tf.string)\n"
        "    with tf.Session() as sess:\n"
        "        sess.run(x)\n"
        "graph = tf.Graph()\n"
        "with graph.as_default(), tf.Session() as s:\n"
        "    y = tf.placeholder(tf.float32)\n"
        "sess = tf.Session()\n"
        "on_graph = tf.Session(graph=graph)\n"
        "none = tf.Session(graph=None)\n"
        "with tf.Session() as t, graph.as_default():\n"
        "    pass\n"
    )
    report = report_of(tmp_path, source)
    assert statuses(report) == [
        (3, "tf.placeholder", "supported"),
        (4, "tf.Session", "supported"),
        (7, "tf.Session", "supported"),  # after as_default() in the same `with`: on `graph`
        (8, "tf.placeholder", "supported"),
        (9, "tf.Session", "unsupported"),
        (10, "tf.Session", "supported"),  # a graph of its own
        (11, "tf.Session", "unsupported"),
        (12, "tf.Session", "unsupported"),  # opened before the graph becomes the default
    ]
    assert "graph mode" in report.findings[0].note
    assert "a session on a graph of its own" in report.findings[5].note


NOTEBOOK = {
    "cells": [
        {"cell_type": "markdown", "source": ["tf.contrib.foo"]},
        {"cell_type": "code", "source": [
            "!python run.py --a=1 \\\n", "  --b=2 \\\n", "  --c=3\n",
            "%matplotlib inline\n", "import tensorflow as tf\n"]},
        {"cell_type": "code", "source": "%%bash\necho hi && (\n"},
        {"cell_type": "code", "source": "%%time\nx = 1\ntf.logging.info(x)\n"},
        {"cell_type": "code", "source": "def f(:\n"},
        {"cell_type": "code", "source": [
            "files = !ls\n", "tf.estimator?\n", "s = ('%d'\n", "     % 3)\n",
            "est = tf.estimator.Estimator(fn)\n"]},
    ]
}  # fmt: skip


def test_notebook_findings_map_to_cell_and_line(tmp_path):
    path = tmp_path / "nb.ipynb"
    path.write_text(json.dumps(NOTEBOOK))
    (report,) = scan([str(path)])
    assert [(f.cell, f.line, f.api, f.status) for f in report.findings] == [
        (4, 3, "tf.logging.info", "unsupported"),  # TF 2 import in a notebook: no TF1 mode
        (5, 1, "<syntax>", "error"),  # one cell does not parse; the others are still read
        (6, 5, "tf.estimator.Estimator", "supported"),
    ]
    assert all(f.line >= 1 for f in report.findings)
    text = format_text([report])
    assert "nb.ipynb:cell 4:3: [UNSUPPORTED] tf.logging.info" in text


def test_shell_and_magic_lines_do_not_make_a_notebook_fail(tmp_path):
    cells = [c for c in NOTEBOOK["cells"] if "def f(" not in "".join(c["source"])]
    cells = [c for c in cells if "tf.logging" not in "".join(c["source"])]
    path = tmp_path / "nb.ipynb"
    path.write_text(json.dumps({"cells": cells}))
    result = run_python("-m", "keras_estimator", "check", str(path), timeout=60)
    assert result.returncode == 0, result.stdout
    assert "<syntax>" not in result.stdout


def test_a_script_is_as_good_as_the_files_it_imports(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "helper.py").write_text(
        "import tensorflow.compat.v1 as tf\nm = tf.contrib.metrics.f1_score\n"
    )
    (tmp_path / "pkg" / "main.py").write_text(
        "import tensorflow.compat.v1 as tf\nfrom pkg import helper\n"
        "est = tf.estimator.Estimator(fn)\n"
    )
    (tmp_path / "pkg" / "other.py").write_text("from . import helper\nimport os\n")
    reports = {os.path.basename(r.path): r for r in scan([str(tmp_path)])}
    assert reports["helper.py"].verdict == "blocked"
    assert reports["main.py"].own_verdict == "ok"
    assert reports["main.py"].verdict == "blocked"
    assert reports["other.py"].verdict == "blocked"
    assert "BLOCKED through its imports" in format_text(list(reports.values()))


def test_summary_line_and_json_schema(tmp_path):
    (tmp_path / "a.py").write_text(TF1_SCRIPT)
    (tmp_path / "b.py").write_text("import tensorflow.compat.v1 as tf\ntf.Session()\n")
    (tmp_path / "c.py").write_text("import os\n")
    (tmp_path / "d.ipynb").write_text("[]")
    reports = scan([str(tmp_path)])
    text = format_text(reports)
    assert text.splitlines()[-1] == (
        "Summary: 4 files: 0 ok, 0 with caveats, 1 TF1 mode (run only), 1 blocked, "
        "1 unreadable, 0 skipped, 1 without TensorFlow. 9 TensorFlow references; findings: "
        "1 ok, 0 caveat, 6 tf1 mode, 1 unsupported, 1 error, 0 skipped."
    )
    document = json.loads(format_json(reports))
    assert document["schema"] == "keras-estimator-check/2"
    assert set(document) == {"schema", "files", "findings", "summary", "exit_status"}
    assert document["exit_status"] == 1
    first = document["files"][0]
    assert set(first) >= {"path", "kind", "verdict", "own_verdict", "imported_verdicts",
                          "tensorflow_imports", "references", "counts"}  # fmt: skip
    assert first["verdict"] == "tf1_mode" and first["tensorflow_imports"] == {"v2": ["tf"]}
    assert document["summary"]["verdicts"]["blocked"] == 1
    assert {f["status"] for f in document["findings"]} <= {
        "supported", "caveat", "tf1_mode", "unsupported", "error", "skipped"}  # fmt: skip


def test_a_tf1_test_session_outside_a_graph_block_blocks(tmp_path):
    source = (
        "import tensorflow.compat.v1 as tf\n"
        "class T(tf.test.TestCase):\n"
        "    def test_eager(self):\n"
        "        with self.test_session() as sess:\n"
        "            g = tf.gradients(y, [x])\n"
        "    def test_graph(self):\n"
        "        with tf.Graph().as_default():\n"
        "            with self.test_session() as sess:\n"
        "                g = tf.gradients(y, [x])\n"
    )
    report = report_of(tmp_path, source, "model_test.py")
    assert statuses(report) == [
        (4, "TestCase.test_session", "unsupported"),  # TF 2 runs the block eagerly
        (5, "tf.gradients", "unsupported"),  # RuntimeError in TF 2's eager test session
    ]
    assert "tf.Graph().as_default()" in report.findings[1].replacement
