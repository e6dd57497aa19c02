"""`keras-estimator run`: a legacy script (or `-m module`) run with `install()` done first.

The script runs as `__main__` with `sys.argv` as it expects (`[script, *args]`) and its
directory first on `sys.path`, like `python script.py`; `absl.app.run`,
`tf.compat.v1.app.run` and `tf.compat.v1.flags` work as usual. The exit status is the
script's: `sys.exit(n)` gives `n`, an uncaught exception 1 with its traceback.

With `tf1=True` (TF1 mode, `dropin.tf1_scripts`) the script and the modules of its folder
see `tensorflow.compat.v1` as `tensorflow`, and shapes are TF1's (`Dimension`, `.value`).
One log line says which mode runs and why.
"""

from __future__ import annotations

import contextlib
import logging
import os
import runpy
import sys
from collections.abc import Iterator
from typing import Any

from keras_estimator.dropin.install import install
from keras_estimator.dropin.tf1_scripts import ScriptTree
from keras_estimator.utils.log import LOGGER_NAME

logger = logging.getLogger(LOGGER_NAME)


def _exit_status(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    sys.stderr.write(f"{code}\n")  # sys.exit("message") prints it and exits 1, as Python does
    return 1


@contextlib.contextmanager
def _script_tree(root: str, tf1: bool, reason: str) -> Iterator[dict[str, Any]]:
    """The globals the script starts with: its tree's builtins (`dropin.tf1_scripts`)."""
    tree = ScriptTree(root, tf1=tf1)
    if tf1:
        logger.warning("keras-estimator run: TF1 mode (%s): `import tensorflow` gives "
                       "tensorflow.compat.v1, and shapes are TF1's (Dimension, .value), in the "
                       "script and the modules of %s; --tf2 turns this off.",
                       reason, tree.root)  # fmt: skip
    else:
        logger.info("keras-estimator run: TF2 mode (%s): `import tensorflow` is TensorFlow "
                    "2's API; --tf1 reads it as tensorflow.compat.v1.", reason)  # fmt: skip
    with tree.active():
        yield tree.script_globals()


def run_script(path: str, args: list[str], tf1: bool = False, reason: str = "") -> int:
    """Runs the file at `path` as `__main__` with `args`; returns its exit status.

    Example:
        >>> run_script("run_classifier.py", ["--do_train=true"], tf1=True)
    """
    if not os.path.isfile(path):
        sys.stderr.write(
            f"keras-estimator run: cannot find the script {path!r}. Expected the path of a "
            "Python file, or `-m module.name` for a module.\n"
        )
        return 2
    install()
    sys.argv = [path, *args]
    folder = os.path.dirname(os.path.abspath(path))
    sys.path.insert(0, folder)
    try:
        with _script_tree(folder, tf1, reason or "the default") as init_globals:
            runpy.run_path(path, init_globals=init_globals, run_name="__main__")
    except SystemExit as exc:
        return _exit_status(exc.code)
    return 0


def run_module(name: str, args: list[str], tf1: bool = False, reason: str = "") -> int:
    """Runs module `name` as `python -m name args...` would; returns its exit status.
    In TF1 mode, the modules under the current directory are the script's."""
    install()
    sys.argv = [name, *args]
    sys.path.insert(0, os.getcwd())
    try:
        with _script_tree(os.getcwd(), tf1, reason or "the default") as init_globals:
            runpy.run_module(name, init_globals=init_globals, run_name="__main__", alter_sys=True)
    except SystemExit as exc:
        return _exit_status(exc.code)
    return 0
