"""`keras-estimator run [--tf1 | --tf2] SCRIPT.py [ARGS...] | run [--tf1 | --tf2] -m MODULE`.

Chooses the script's TensorFlow API (TF1 mode: `import tensorflow` reads as
`tensorflow.compat.v1` in the script's own files; TF2 mode: as written), from the flags or
from the script's source, and hands over to `dropin.script_runner`. TensorFlow is imported
only after `TF_CPP_MIN_LOG_LEVEL` is set.
"""

from __future__ import annotations

import ast
import os
import sys

RUN_HELP = """\
usage: keras-estimator run [--tf1 | --tf2] SCRIPT.py [ARGS...]
       keras-estimator run [--tf1 | --tf2] -m MODULE [ARGS...]

Runs a legacy tf.estimator / TensorFlow 1.x script as it is: keras_estimator.install()
first (tf.estimator, tf.compat.v1.estimator, tensorflow_estimator.* and the provided
tf.contrib pieces resolve to keras_estimator), then the script as __main__ with
sys.argv = [SCRIPT.py, ARGS...] and its folder first on sys.path. The exit status is the
script's. Everything after SCRIPT.py (or MODULE) is the script's own arguments.

options (before SCRIPT.py / -m):
  --tf1      TF1 mode: `import tensorflow` in the script and in the modules it imports
             from its own folder (not installed packages) gives tensorflow.compat.v1, so
             tf.logging, tf.flags, tf.app.run, tf.gfile, tf.train.Optimizer,
             tf.get_variable, tf.layers, tf.contrib and shape[i].value work as in TF 1.x.
             TensorFlow, Keras and keras_estimator themselves keep TF 2.
  --tf2      TF2 mode: `import tensorflow` stays TensorFlow 2's API.
  (neither)  TF1 mode when the script, or a module of its folder that it imports, uses
             names only TensorFlow 1.x had through `import tensorflow` (what
             `keras-estimator check` reports as TF1-only); TF2 mode otherwise.
  -h, --help this text.
A log line says which mode was chosen and why. Calls to
tf.compat.v1.disable_v2_behavior() / disable_eager_execution() /
disable_resource_variables() are answered by keeping eager execution and resource
variables (the Keras training step needs them) and applying TF1 tensor shapes; a log
line says so.

environment:
  TF_CPP_MIN_LOG_LEVEL  TensorFlow's C++ log level; `run` sets 2 (warnings and info
                        hidden) unless you set it.
  TF_CONFIG             the cluster and task of a distributed run (read by RunConfig,
                        as tf.estimator did).
  KERAS_BACKEND         must be unset or "tensorflow".
  TF_USE_LEGACY_KERAS   must be unset: keras_estimator runs on Keras 3.
  PYTHONPATH            as for python: where else the script's imports are found.
"""


def _usage_error(message: str) -> int:
    sys.stderr.write(f"keras-estimator run: {message}\n\n{RUN_HELP}")
    return 2


def _module_file(name: str, root: str) -> str | None:
    """The source file `python -m name` would run from `root`, found without importing."""
    base = os.path.join(root, *name.split("."))
    for candidate in (base + ".py", os.path.join(base, "__main__.py")):
        if os.path.isfile(candidate):
            return candidate
    return None


def tf1_evidence(path: str, max_files: int = 200, roots: list[str] | None = None) -> str | None:
    """Where the program `path` starts (with the modules of its tree that it imports,
    transitively) uses a name only TensorFlow 1.x had through `import tensorflow`, in code
    that runs: "pkg/file.py:12 uses tf.logging", or None when nothing does.

    Uses inside functions nothing in the program refers to do not count
    (`migration.uncalled.program_uncalled_nodes`): a TF2-era program keeping a TF1 reader
    helper it never calls runs with TF 2's API, as it did on 2.15. `roots`: where absolute
    imports start (`-m`: the current directory; default: `path`'s folder).
    """
    from keras_estimator.migration.local_imports import (
        imported_modules,
        module_files,
        package_inits,
    )
    from keras_estimator.migration.tf1_api import parse, tensorflow_uses
    from keras_estimator.migration.uncalled import program_uncalled_nodes

    pending, seen = [os.path.abspath(path)], set[str]()
    if roots:
        pending += package_inits(path, roots[0])
    roots = [os.path.abspath(root) for root in roots or [os.path.dirname(pending[0])]]
    trees: dict[str, ast.AST] = {}
    while pending and len(seen) < max_files:
        current = pending.pop(0)
        if current in seen:
            continue
        seen.add(current)
        try:
            with open(current, encoding="utf-8") as f:
                trees[current] = parse(f.read(), current)
        except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
            continue
        pending += module_files(current, imported_modules(ast.walk(trees[current])), roots)
    uncalled = program_uncalled_nodes(trees)
    for current, tree in trees.items():
        uses = [use for use in tensorflow_uses(tree) if use.tf1_only and use.namespace == "v2"]
        uses = [use for use in uses if id(use.node) not in uncalled[current]]
        if uses:
            where = os.path.relpath(current, roots[0])
            return f"{where}:{uses[0].line} uses tf.{uses[0].tf1_only}"
    return None


def run_command(argv: list[str]) -> int:
    """`keras-estimator run ...`: everything after the script is the script's."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # before TensorFlow is imported
    mode = None
    while argv and argv[0] in ("--tf1", "--tf2", "-h", "--help"):
        option, argv = argv[0], argv[1:]
        if option in ("-h", "--help"):
            sys.stdout.write(RUN_HELP)
            return 0
        if mode is not None and mode != option:
            return _usage_error("--tf1 and --tf2 exclude each other.")
        mode = option
    if not argv or (argv[0] == "-m" and len(argv) < 2):
        return _usage_error("expected a script (or -m MODULE) to run.")
    if argv[0].startswith("-") and argv[0] != "-m":
        return _usage_error(f"unknown option {argv[0]!r} (options go before the script).")
    module = argv[1] if argv[0] == "-m" else None
    source = _module_file(module, os.getcwd()) if module else argv[0]
    if mode is not None:
        tf1, reason = mode == "--tf1", f"{mode} given"
    else:
        roots = [os.getcwd()] if module else None  # `python -m` imports from the cwd
        # source None: `-m` of a module with no file found
        evidence = tf1_evidence(source, roots=roots) if source and os.path.isfile(source) else None
        tf1 = evidence is not None
        reason = evidence or "no TF1-only name used through `import tensorflow`"

    from keras_estimator.cli.quiet_tensorflow import import_tensorflow_quietly

    import_tensorflow_quietly()  # TensorFlow's load-time C++ lines, below the level, dropped
    from keras_estimator.utils.log import print_each_record_once

    print_each_record_once()  # once absl's handler is on the root logger (tf.app.run)
    from keras_estimator.dropin.script_runner import run_module, run_script

    if module:
        return run_module(module, argv[2:], tf1=tf1, reason=reason)
    return run_script(argv[0], argv[1:], tf1=tf1, reason=reason)
