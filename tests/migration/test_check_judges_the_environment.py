"""`check` says blocked exactly where `run` fails here: a tf.placeholder that runs eagerly
(outside a graph block, a function called from one, or a serving input function), and a
use that needs an optional package this Python lacks (tf-slim, pandas) — found with
importlib.util.find_spec; the package hidden the way Python documents (sys.modules[name] =
None makes its import fail)."""

import sys
import textwrap

from helpers import run_python

from keras_estimator.migration import scan

HIDE = "import sys\nfor name in sys.argv[1].split(','):\n    sys.modules[name] = None\n"
MAIN = "from keras_estimator.cli.main import main\nsys.exit(main(sys.argv[2:]))\n"


def cli_without(packages, *args, cwd=None):
    """`keras-estimator *args` in a child Python where `packages` cannot be imported."""
    return run_python("-c", HIDE + MAIN, ",".join(packages) or "_", *args, cwd=cwd)


def report_of(tmp_path, source):
    path = tmp_path / "script.py"
    path.write_text(textwrap.dedent(source))
    (report,) = scan([str(path)])
    return report


def statuses(report):
    return [(f.line, f.api, f.status) for f in report.findings if "placeholder" in f.api]


def test_placeholders_block_where_they_would_run_eagerly(tmp_path):
    report = report_of(tmp_path, """\
        import tensorflow.compat.v1 as tf
        x = tf.placeholder(tf.float32, [None, 3])

        def serving_input_fn():
            f = tf.placeholder(tf.float32, [None, 3])
            return tf.estimator.export.ServingInputReceiver({"x": f}, {"x": f})

        def make_receiver():
            s = tf.placeholder(tf.string, [None])
            return tf.estimator.export.TensorServingInputReceiver(s, s)

        def exported():
            return tf.placeholder(tf.float32)

        def build():
            return tf.placeholder(tf.float32)

        def main():
            y = tf.placeholder_with_default(1.0, [])
            with tf.Graph().as_default():
                build()
            est.export_saved_model("d", exported)
            est.export_saved_model("d", lambda: tf.placeholder(tf.float32))
    """)  # fmt: skip
    assert statuses(report) == [
        (2, "tf.placeholder", "unsupported"),
        (5, "tf.placeholder", "caveat"),  # a serving input fn: the export builds a graph
        (9, "tf.placeholder", "caveat"),  # returns a receiver
        (13, "tf.placeholder", "caveat"),  # passed to export_saved_model
        (16, "tf.placeholder", "supported"),  # called inside a graph block
        (19, "tf.placeholder_with_default", "unsupported"),
        (23, "tf.placeholder", "caveat"),  # a lambda given to an export
    ]
    blocked = report.findings[0]
    assert "not compatible with eager execution" in blocked.note
    assert "tf.data.Dataset" in blocked.replacement and report.verdict == "blocked"


def test_a_module_level_placeholder_blocks_in_check_and_fails_in_run(tmp_path):
    script = tmp_path / "feed.py"
    script.write_text("import tensorflow as tf\nx = tf.placeholder(tf.float32, [None, 3])\n")
    check = cli_without([], "check", str(script))
    assert check.returncode == 1 and "[UNSUPPORTED] tf.placeholder" in check.stdout
    run = cli_without([], "run", str(script))
    assert run.returncode == 1
    assert "not compatible with eager execution" in run.stderr


SLIM_SCRIPT = """\
import tensorflow.compat.v1 as tf
slim = tf.contrib.slim
fn = tf.estimator.inputs.pandas_input_fn
print("RAN", slim.fully_connected is not None)
"""


def test_a_missing_optional_package_blocks_with_the_pip_command(tmp_path):
    script = tmp_path / "slim_job.py"
    script.write_text(SLIM_SCRIPT)
    (present,) = scan([str(script)])
    installed = {f.api: f.status for f in present.findings}
    assert installed["tf.contrib.slim"] == "caveat"  # tf-slim is installed here
    assert installed["tf.estimator.inputs.pandas_input_fn"] == "supported"

    check = cli_without(["tf_slim", "pandas"], "check", str(script))
    assert check.returncode == 1, check.stdout
    assert "[UNSUPPORTED] tf.contrib.slim - needs the tf-slim package" in check.stdout
    assert f"not installed for {sys.executable}" in check.stdout
    assert "pip install keras-estimator[slim] (or pip install tf-slim)" in check.stdout
    assert "[UNSUPPORTED] tf.estimator.inputs.pandas_input_fn - needs the pandas" in check.stdout
    assert "pip install pandas" in check.stdout

    # run agrees: without tf-slim the script fails; with it, it runs.
    missing = cli_without(["tf_slim"], "run", str(script))
    assert missing.returncode == 1 and "tf-slim" in missing.stderr, missing.stderr[-2000:]
    present_run = cli_without([], "run", str(script))
    assert present_run.returncode == 0 and "RAN True" in present_run.stdout
