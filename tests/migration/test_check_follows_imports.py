"""`check ENTRY.py` also checks the program's own modules that the entry imports (as `run`
runs them): a package started as `python -m trainer.task` whose TF1 or contrib use sits in
`trainer/model.py`, reached by `from . import model` or `from trainer import model`."""

import textwrap

from helpers import run_python

from keras_estimator.migration import exit_status, format_json, scan

TASK_RELATIVE = "from . import model\n\nif __name__ == '__main__':\n    model.train()\n"
TASK_ABSOLUTE = "from trainer import model\n\nif __name__ == '__main__':\n    model.train()\n"
BLOCKED_MODEL = """\
import tensorflow as tf

def train():
    return tf.contrib.learn.RunConfig()
"""
TF1_MODEL = """\
import tensorflow as tf
from trainer import util

def train():
    tf.logging.info("training %s", util.NAME)
    print("TRAINED")
"""
UTIL = "import tensorflow as tf\nNAME = tf.estimator.ModeKeys.TRAIN\n"


def package(root, task, model, util=None):
    trainer = root / "trainer"
    trainer.mkdir(parents=True)
    (trainer / "__init__.py").write_text("")
    (trainer / "task.py").write_text(task)
    (trainer / "model.py").write_text(textwrap.dedent(model))
    if util is not None:
        (trainer / "util.py").write_text(util)
    return trainer / "task.py"


def cli(*args, cwd):
    return run_python("-m", "keras_estimator", *args, cwd=cwd)


def test_a_relative_import_of_a_blocked_module_blocks_the_entry_file(tmp_path, monkeypatch):
    package(tmp_path, TASK_RELATIVE, BLOCKED_MODEL)
    monkeypatch.chdir(tmp_path)
    reports = scan(["trainer/task.py"])
    by_path = {r.path: r for r in reports}
    assert set(by_path) == {"trainer/task.py", "trainer/model.py", "trainer/__init__.py"}
    assert by_path["trainer/model.py"].imported_by == "trainer/task.py"
    assert by_path["trainer/task.py"].verdict == "blocked"
    assert exit_status(reports) == 1
    assert '"imported_by": "trainer/task.py"' in format_json(reports)

    check = cli("check", "trainer/task.py", cwd=tmp_path)
    assert check.returncode == 1, check.stdout
    assert "trainer/model.py:4: [UNSUPPORTED] tf.contrib.learn.RunConfig" in check.stdout
    assert "VERDICT BLOCKED through its imports: trainer/model.py (blocked)" in check.stdout
    assert "(checked as imported by trainer/task.py)" in check.stdout
    # run agrees: the module's contrib.learn use fails when the package runs.
    run = cli("run", "-m", "trainer.task", cwd=tmp_path)
    assert run.returncode == 1 and "tensorflow.contrib.learn" in run.stderr, run.stderr[-2000:]


def test_absolute_imports_are_followed_transitively_and_tf1_mode_passes(tmp_path):
    package(tmp_path, TASK_ABSOLUTE, TF1_MODEL, UTIL)
    check = cli("check", "trainer/task.py", cwd=tmp_path)
    assert check.returncode == 0, check.stdout
    assert "trainer/model.py:5: [TF1 MODE] tf.logging.info" in check.stdout
    assert "trainer/util.py:2: [ok] tf.estimator.ModeKeys.TRAIN" in check.stdout
    assert "VERDICT TF1_MODE through its imports: trainer/model.py (tf1_mode)" in check.stdout
    run = cli("run", "-m", "trainer.task", cwd=tmp_path)
    assert run.returncode == 0 and "TRAINED" in run.stdout, run.stderr[-2000:]


def test_the_package_is_found_from_elsewhere_and_installed_modules_are_not_followed(tmp_path):
    task = package(tmp_path / "project", TASK_ABSOLUTE, BLOCKED_MODEL)
    (tmp_path / "project" / "trainer" / "task.py").write_text(
        "import os\nimport numpy\n" + TASK_ABSOLUTE
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    check = cli("check", str(task), cwd=elsewhere)
    assert check.returncode == 1, check.stdout
    assert f"{tmp_path}/project/trainer/model.py:4: [UNSUPPORTED]" in check.stdout
    assert "Summary: 3 files" in check.stdout  # task, model, the package's __init__; no numpy
