"""`run` picks TF1 mode for a package whose TF 1.x code sits in a module reached by a
relative import (the Cloud ML layout: `trainer/task.py` does `from . import model`, started
as `python -m trainer.task`), and `check` on that package says the same."""

import os
import textwrap

from helpers import run_python

from keras_estimator.cli.run_command import tf1_evidence
from keras_estimator.migration.scanner import scan

TASK = """
    import tensorflow as tf
    from . import model

    if __name__ == "__main__":
        model.log("hello")
        print("RAN", tf.__name__)
"""
MODEL = """
    import tensorflow as tf

    def log(message):
        tf.logging.info(message)
"""


def write_tree(root, files):
    for name, source in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(source))


def test_relative_imports_lead_to_the_tf1_module(tmp_path):
    write_tree(tmp_path, {"trainer/__init__.py": "", "trainer/task.py": TASK,
                          "trainer/model.py": MODEL})  # fmt: skip
    task = str(tmp_path / "trainer" / "task.py")
    assert tf1_evidence(task, roots=[str(tmp_path)]) == "trainer/model.py:5 uses tf.logging"
    # A two-level relative import, and `from .pkg.mod import name`.
    write_tree(tmp_path, {
        "deep/__init__.py": "", "deep/util/__init__.py": "",
        "deep/util/io.py": "import tensorflow as tf\nOPEN = tf.gfile.Open\n",
        "deep/jobs/__init__.py": "", "deep/jobs/a.py": "from ..util.io import OPEN\n",
        "deep/jobs/b.py": "from . import a\n",
    })  # fmt: skip
    b_job = str(tmp_path / "deep" / "jobs" / "b.py")
    assert tf1_evidence(b_job, roots=[str(tmp_path)]) == "deep/util/io.py:2 uses tf.gfile"
    # A package's __init__.py runs first under `python -m`.
    # (Its code that runs: a function nothing calls is no evidence, see test_tf1_evidence.py.)
    init = "import tensorflow as tf\ntf.logging.set_verbosity(tf.logging.INFO)\n"
    write_tree(tmp_path, {"pkg/__init__.py": init, "pkg/main.py": "print('x')\n"})
    assert tf1_evidence(str(tmp_path / "pkg" / "main.py"), roots=[str(tmp_path)]) == (
        "pkg/__init__.py:2 uses tf.logging"
    )
    # Nothing TF1-only anywhere: TF2 mode.
    write_tree(tmp_path, {"clean/__init__.py": "", "clean/task.py": "from . import m\n",
                          "clean/m.py": "import tensorflow as tf\nX = tf.ones([1])\n"})  # fmt: skip
    assert tf1_evidence(str(tmp_path / "clean" / "task.py"), roots=[str(tmp_path)]) is None


def test_cloud_ml_layout_runs_as_a_module_in_tf1_mode_and_check_agrees(tmp_path):
    write_tree(tmp_path, {"trainer/__init__.py": "", "trainer/task.py": TASK,
                          "trainer/model.py": MODEL})  # fmt: skip
    result = run_python("-m", "keras_estimator", "run", "-m", "trainer.task", cwd=str(tmp_path))
    assert result.returncode == 0, result.stderr[-3000:]
    assert "RAN tensorflow.compat.v1" in result.stdout
    assert "TF1 mode (trainer/model.py:5 uses tf.logging)" in result.stderr

    verdicts = {os.path.relpath(r.path, tmp_path): r.verdict for r in scan([str(tmp_path)])}
    assert verdicts["trainer/task.py"] == "tf1_mode"  # through `from . import model`
    assert verdicts["trainer/model.py"] == "tf1_mode"
