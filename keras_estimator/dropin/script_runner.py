"""`keras-estimator run`: a legacy script (or `-m module`) run with `install()` done first.

The script runs as `__main__` with `sys.argv` as it expects (`[script, *args]`) and its
directory first on `sys.path`, like `python script.py`; `absl.app.run`,
`tf.compat.v1.app.run` and `tf.compat.v1.flags` work as usual. The exit status is the
script's: `sys.exit(n)` gives `n`, an uncaught exception 1 with its traceback.
"""

from __future__ import annotations

import os
import runpy
import sys

from keras_estimator.dropin.install import install


def _exit_status(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    sys.stderr.write(f"{code}\n")  # sys.exit("message") prints it and exits 1, as Python does
    return 1


def run_script(path: str, args: list[str]) -> int:
    """Runs the file at `path` as `__main__` with `args`; returns its exit status."""
    if not os.path.isfile(path):
        sys.stderr.write(
            f"keras-estimator run: cannot find the script {path!r}. Expected the path of a "
            "Python file, or `-m module.name` for a module.\n"
        )
        return 2
    install()
    sys.argv = [path, *args]
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    try:
        runpy.run_path(path, run_name="__main__")
    except SystemExit as exc:
        return _exit_status(exc.code)
    return 0


def run_module(name: str, args: list[str]) -> int:
    """Runs module `name` as `python -m name args...` would; returns its exit status."""
    install()
    sys.argv = [name, *args]
    sys.path.insert(0, os.getcwd())
    try:
        runpy.run_module(name, run_name="__main__", alter_sys=True)
    except SystemExit as exc:
        return _exit_status(exc.code)
    return 0
