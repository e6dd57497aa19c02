"""The corpus tool (tools/corpus) on a tiny program of our own: a recipe's data and edits land
in a fresh copy, the program runs through `keras-estimator run` (and on the tf.estimator 2.15
venv where it exists), and the table reads the final evaluation dict and the first error."""

import base64
import hashlib
import os
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

# tools/ sits beside the package, outside what pytest puts on sys.path.
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tools.corpus import datagen, library_tests, runner, table  # noqa: E402
from tools.corpus.recipe import Edit, Recipe  # noqa: E402

# The tensorflow-estimator 2.15 venv, where this machine has one.
REFERENCE_PYTHON = next(
    (p for p in ("/tmp/venv215/bin/python", "/work/venv215/bin/python") if os.path.exists(p)),
    "/tmp/venv215/bin/python",
)

# Ours, written for this test: a TF 1.x-style script (tf.logging, tf.layers, a custom model_fn)
# that reads a CSV and evaluates.
PROGRAM = """
import numpy as np
import tensorflow as tf

tf.logging.set_verbosity(tf.logging.INFO)
STEPS = 1000


def model_fn(features, labels, mode):
    logits = tf.layers.dense(features["x"], 2)
    loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(
        loss, global_step=tf.train.get_global_step())
    accuracy = tf.metrics.accuracy(labels, tf.argmax(logits, 1))
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op,
                                      eval_metric_ops={"accuracy": accuracy})


data = np.loadtxt("data/points.csv", delimiter=",", skiprows=1, dtype=np.float32)
features, labels = {"x": data[:, :2]}, data[:, 2].astype(np.int32)
input_fn = tf.estimator.inputs.numpy_input_fn(features, labels, batch_size=8,
                                              num_epochs=None, shuffle=False)
eval_fn = tf.estimator.inputs.numpy_input_fn(features, labels, batch_size=8,
                                             num_epochs=1, shuffle=False)
est = tf.estimator.Estimator(model_fn, model_dir="model")
est.train(input_fn, steps=STEPS)
print(est.evaluate(eval_fn))
"""


def points(work: Path) -> None:
    datagen.csv_file(
        work / "data/points.csv",
        {"a": datagen.uniform(), "b": datagen.uniform(), "y": datagen.integer(0, 2)},
        rows=32,
    )


def _recipe() -> Recipe:
    return Recipe(
        name="ours-tiny",
        repo="example/tiny",
        commit="0" * 40,
        folder="prog",
        entry="train.py",
        kind="test program",
        data=points,
        edits=(
            Edit(
                "train.py",
                "import tensorflow as tf\n",
                "import tensorflow.compat.v1 as tf\ntf.disable_v2_behavior()\n",
            ),
            Edit("train.py", "STEPS = 1000", "STEPS = 5"),
        ),
    )


@pytest.fixture
def checkouts(tmp_path: Path) -> Path:
    program = tmp_path / "checkouts" / "example+tiny" / "prog" / "train.py"
    program.parent.mkdir(parents=True)
    program.write_text(textwrap.dedent(PROGRAM))
    return tmp_path / "checkouts"


def test_prepare_writes_data_and_applies_edits_only_when_edited(checkouts, tmp_path):
    recipe = _recipe()
    runner.prepare(recipe, checkouts, tmp_path / "raw", edited=False)
    runner.prepare(recipe, checkouts, tmp_path / "edited", edited=True)
    assert (tmp_path / "raw/data/points.csv").read_text().startswith("a,b,y\n")
    assert "STEPS = 1000" in (tmp_path / "raw/train.py").read_text()
    edited = (tmp_path / "edited/train.py").read_text()
    assert "STEPS = 5" in edited and "tf.disable_v2_behavior()" in edited


def test_a_stale_edit_is_reported_not_silently_skipped(checkouts, tmp_path):
    stale = Recipe(
        name="stale",
        repo="example/tiny",
        commit="0" * 40,
        folder="prog",
        entry="train.py",
        kind="",
        edits=(Edit("train.py", "STEPS = 7", "STEPS = 1"),),
    )
    outcome = runner.run_case(
        stale,
        "edited",
        checkouts,
        tmp_path / "work",
        runner.Pythons(REFERENCE_PYTHON, sys.executable),
    )
    assert outcome.status == "fail" and "not in train.py" in outcome.error


def test_logs_give_metrics_and_first_error():
    log = (
        "INFO:tensorflow:Saving dict for global step 5: accuracy = 0.5, global_step = 5, "
        'loss = 0.69\nTraceback (most recent call last):\n  File "x.py", line 1\n'
        "    boom()\nValueError: hidden_units must be positive integers\nexit\n"
    )
    assert runner.parse_metrics(log) == {"accuracy": 0.5, "loss": 0.69, "global_step": 5.0}
    assert runner.first_error(log) == "ValueError: hidden_units must be positive integers"
    # A program that prints its own traceback and exits 0 has not run.
    assert runner.classify(0, log).status == "fail"
    assert runner.classify(0, "Loss for final step: 0.5.\n").status == "pass"
    assert runner.metrics_comparable(
        {"loss": 0.7, "global_step": 5.0}, {"loss": 0.69, "global_step": 5.0}
    )
    assert not runner.metrics_comparable(
        {"loss": 0.7, "global_step": 5.0}, {"auc": 0.69, "global_step": 5.0}
    )


def test_the_program_runs_here_and_the_table_shows_it(checkouts, tmp_path):
    recipe = _recipe()
    pythons = runner.Pythons(REFERENCE_PYTHON, sys.executable)
    edited = runner.run_case(recipe, "edited", checkouts, tmp_path / "work", pythons, 240)
    assert edited.status == "pass", edited.log[-3000:]
    assert edited.metrics["global_step"] == 5.0 and 0.0 <= edited.metrics["accuracy"] <= 1.0
    rows = [(recipe, {"edited": edited}, None)]
    text = table.render(rows)
    assert "| ours-tiny | test program | - | pass |" in text


@pytest.mark.skipif(
    not os.path.exists(REFERENCE_PYTHON),
    reason="needs the tensorflow-estimator 2.15 venv (/tmp/venv215 or /work/venv215)",
)
def test_the_same_edits_run_on_tf_estimator_2_15(checkouts, tmp_path):
    outcome = runner.run_case(
        _recipe(),
        "2.15",
        checkouts,
        tmp_path / "work",
        runner.Pythons(REFERENCE_PYTHON, sys.executable),
        240,
    )
    assert outcome.status == "pass", outcome.log[-3000:]
    assert outcome.metrics["global_step"] == 5.0


def test_the_summary_counts_comparable_metrics_only_where_2_15_logged_some():
    recipe = Recipe(name="p", repo="example/tiny", commit="0" * 40, folder=".", entry="p.py",
                    kind="")  # fmt: skip
    logged = runner.Outcome("pass", metrics={"loss": 0.7, "global_step": 5.0})
    silent = runner.Outcome("pass")
    rows = [
        (recipe, {"2.15": logged, "edited": logged, "unmodified": logged}, 0),
        (recipe, {"2.15": silent, "edited": silent, "unmodified": silent}, 0),
    ]
    text = table.summary(rows)
    assert (
        "comparable metrics (same keys, loose band): 1/2 (50%) (1 logged no metrics on 2.15)"
        in text
    )
    assert "run here with no edit to their code: 2/2 (100%)" in text


def _tiny_wheel(folder: Path) -> Path:
    """A wheel of ours, made by hand: package corpus_tiny_lib with ANSWER = 42."""
    files = {
        "corpus_tiny_lib/__init__.py": "ANSWER = 42\n",
        "corpus_tiny_lib-0.1.dist-info/METADATA": (
            "Metadata-Version: 2.1\nName: corpus-tiny-lib\nVersion: 0.1\n"
        ),
        "corpus_tiny_lib-0.1.dist-info/WHEEL": (
            "Wheel-Version: 1.0\nGenerator: ours\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        ),
    }
    record = []
    for name, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=")
        record.append(f"{name},sha256={digest.decode()},{len(text.encode())}")
    record.append("corpus_tiny_lib-0.1.dist-info/RECORD,,")
    files["corpus_tiny_lib-0.1.dist-info/RECORD"] = "\n".join(record) + "\n"
    wheel = folder / "corpus_tiny_lib-0.1-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return wheel


LIBRARY_USER = """
import sys

import corpus_tiny_lib

MODEL = "first"
print("library answer", corpus_tiny_lib.ANSWER, "from", corpus_tiny_lib.__file__, MODEL)
"""


def _library_recipe(wheel: Path) -> Recipe:
    return Recipe(
        name="ours-library",
        repo="example/tiny",
        commit="0" * 40,
        folder="prog",
        entry="use.py",
        kind="test program using a pip package",
        variant=(Edit("use.py", 'MODEL = "first"', 'MODEL = "second"'),),
        pip=(str(wheel),),
    )


def test_pip_packages_go_to_a_side_folder_once_and_on_both_sides_path(tmp_path, monkeypatch):
    checkouts = tmp_path / "checkouts"
    program = checkouts / "example+tiny" / "prog" / "use.py"
    program.parent.mkdir(parents=True)
    program.write_text(LIBRARY_USER)
    recipe = _library_recipe(_tiny_wheel(tmp_path))
    pythons = runner.Pythons(REFERENCE_PYTHON, sys.executable)

    outcome = runner.run_case(recipe, "unmodified", checkouts, tmp_path / "work", pythons, 240)

    side = runner.pip_dir(recipe, checkouts)
    assert side is not None and side.is_relative_to(checkouts.resolve())
    assert (side / "corpus_tiny_lib" / "__init__.py").exists()
    assert outcome.status == "pass", outcome.log[-3000:]
    # The package came from the side folder; the variant edit applies to the unmodified case.
    assert f"library answer 42 from {side}" in outcome.log and "second" in outcome.log
    for here in (True, False):
        paths = runner._environment(recipe, tmp_path, here, side)["PYTHONPATH"].split(os.pathsep)
        assert str(side) in paths
        assert (paths[0] == str(runner.PROJECT_DIR)) == here
    # Installed once: a second run does not call pip again.
    monkeypatch.setattr(runner.subprocess, "run", lambda *a, **k: pytest.fail("pip ran again"))
    assert runner.install_pip(recipe, checkouts, sys.executable) == side


def test_a_recipe_without_pip_packages_gets_no_side_folder(tmp_path):
    assert runner.pip_dir(_recipe(), tmp_path) is None
    assert runner.install_pip(_recipe(), tmp_path, sys.executable) is None


@pytest.mark.skipif(
    not os.path.exists(REFERENCE_PYTHON),
    reason="needs the tensorflow-estimator 2.15 venv (/tmp/venv215 or /work/venv215)",
)
def test_the_2_15_side_imports_the_same_pip_packages(tmp_path):
    checkouts = tmp_path / "checkouts"
    program = checkouts / "example+tiny" / "prog" / "use.py"
    program.parent.mkdir(parents=True)
    program.write_text(LIBRARY_USER)
    recipe = _library_recipe(_tiny_wheel(tmp_path))
    pythons = runner.Pythons(REFERENCE_PYTHON, sys.executable)
    outcome = runner.run_case(recipe, "2.15", checkouts, tmp_path / "work", pythons, 240)
    assert outcome.status == "pass", outcome.log[-3000:]
    assert f"library answer 42 from {runner.pip_dir(recipe, checkouts)}" in outcome.log


def test_a_peer_suite_copy_gets_its_edits_and_its_conftest_lines(tmp_path):
    test_file = tmp_path / "checkouts" / "example+tiny" / "pkg" / "thing_test.py"
    test_file.parent.mkdir(parents=True)
    test_file.write_text("from pkg import helpers as h\n")
    (test_file.parent / "helpers.py").write_text("FLAGS(sys.argv)\n")
    suite = library_tests.Suite(
        name="tiny",
        repo="example/tiny",
        commit="0" * 40,
        files=("pkg/thing_test.py",),
        pip=(),
        support=("pkg/helpers.py",),
        edits=(Edit("pkg/helpers.py", "FLAGS(sys.argv)", "FLAGS(sys.argv[:1])"),),
        conftest="\nOURS = 1\n",
    )
    library_tests.prepare(suite, tmp_path / "checkouts", tmp_path / "work")
    assert (tmp_path / "work/pkg/helpers.py").read_text() == "FLAGS(sys.argv[:1])\n"
    assert (tmp_path / "work/pkg/thing_test.py").read_text() == test_file.read_text()
    conftest = (tmp_path / "work/conftest.py").read_text()
    assert conftest == library_tests.CONFTEST + "\nOURS = 1\n"


def test_the_tracking_alias_is_valid_python_of_one_module():
    compile(datagen.TRACKING_ALIAS, "corpus_tracking.py", "exec")
    assert "tensorflow.python.checkpoint import graph_view" in datagen.TRACKING_ALIAS
