"""The keras-estimator command is fast and quiet (issue 19 item 6): `--help` and `check`
import no TensorFlow; `demo` loads TensorFlow with its C++ start-up lines silenced unless
the user set TF_CPP_MIN_LOG_LEVEL."""

import os
import subprocess
import sys
import time

from helpers import ROOT

from keras_estimator.cli.quiet_tensorflow import keep

TF_MODULES = "sorted(m for m in sys.modules if m.split('.')[0] in ('tensorflow', 'keras'))"


def python(*args, env=None, timeout=120):
    """A child python with exactly this environment (TF_CPP_MIN_LOG_LEVEL only if given)."""
    child = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}
    child.update(env or {})
    return subprocess.run([sys.executable, *args], capture_output=True, text=True,
                          timeout=timeout, env=child, cwd=ROOT)  # fmt: skip


def test_help_and_check_import_no_tensorflow_and_are_quick(tmp_path):
    script = tmp_path / "legacy.py"
    script.write_text(
        "import tensorflow.compat.v1 as tf\n"
        "from tensorflow_estimator.python.estimator.canned import dnn\n"
        "est = tf.estimator.Estimator(fn)\n"
    )
    code = (
        "import sys, time, contextlib, io\n"
        "started = time.perf_counter()\n"
        "from keras_estimator.cli.main import main\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out):\n"
        "    try:\n        main(['--help'])\n    except SystemExit:\n        pass\n"
        "    main(['check', sys.argv[1]])\n"
        "    main(['check', '--format', 'json', sys.argv[1]])\n"
        "print(round(time.perf_counter() - started, 2))\n"
        f"print({TF_MODULES})\n"
        "print(out.getvalue())\n"
    )
    result = python("-c", code, str(script))
    assert result.returncode == 0, result.stderr
    seconds, modules, output = result.stdout.split("\n", 2)
    assert modules == "[]"
    assert float(seconds) < 3.0, seconds  # importing TensorFlow alone takes ~4 s here
    assert "{demo,run,check}" in output and "[ok] tf.estimator.Estimator" in output

    started = time.monotonic()
    result = python("-m", "keras_estimator", "--help")
    elapsed = time.monotonic() - started
    assert result.returncode == 0 and "check" in result.stdout
    assert elapsed < 5.0, elapsed


def test_load_time_lines_are_filtered_by_level():
    info = "I0000 00:00:1796127974.804190   21822 port.cc:153] oneDNN custom operations are on.\n"
    error = "E0000 00:00:1796127990.886829   21822 cuda_platform.cc:52] failed call to cuInit\n"
    pre = "WARNING: All log messages before absl::InitializeLog() is called are written to STDERR\n"
    assert not keep(info, 2) and not keep(pre, 2) and keep(error, 2)
    assert keep(info, 0) and keep(pre, 0)
    assert not keep(error, 3)
    assert keep("Traceback (most recent call last):\n", 3)
    assert keep("UserWarning: something\n", 2)


def test_a_level_the_user_set_is_kept_and_lets_the_lines_through():
    code = (
        "import os\nfrom keras_estimator.cli.quiet_tensorflow import import_tensorflow_quietly\n"
        "import_tensorflow_quietly()\nprint(os.environ['TF_CPP_MIN_LOG_LEVEL'])\n"
    )
    loud = python("-c", code, env={"TF_CPP_MIN_LOG_LEVEL": "0"})
    assert loud.returncode == 0, loud.stderr
    assert loud.stdout == "0\n"
    # TensorFlow's own load-time lines come through at level 0 (here: oneDNN, no CUDA
    # driver); the demo test below shows the same lines gone at the default level.
    assert "I0000" in loud.stderr, loud.stderr


def test_demo_prints_no_tensorflow_start_up_lines(tmp_path):
    """No TF_CPP_MIN_LOG_LEVEL in the environment: the command sets 2 before TensorFlow loads
    and drops the lines written while its libraries load."""
    result = python("-m", "keras_estimator", "demo", "--steps", "3", "--model-dir",
                    str(tmp_path), timeout=300)  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    assert "eval accuracy" in result.stdout
    for marker in ("I0000", "InitializeLog", "cpu_feature_guard", "oneDNN"):
        assert marker not in result.stderr, result.stderr
