"""`run` chooses TF1 mode from code the program runs: a TF1-only name inside a function
nothing in the program refers to (a TF2-era trainer's unused TFRecord reader) does not make
a program TF1, one in a function the script calls through another module does."""

import ast
import textwrap

from keras_estimator.cli.run_command import tf1_evidence
from keras_estimator.migration.uncalled import program_uncalled_nodes

TASK = """\
import argparse
from trainer import model

if __name__ == "__main__":
    model.train_and_evaluate({"output_dir": "out"})
"""
MODEL = """\
import tensorflow as tf

def build_estimator(model_dir):
    return tf.estimator.DNNLinearCombinedRegressor(model_dir=model_dir, dnn_hidden_units=[4])

def train_and_evaluate(args):
    tf.compat.v1.logging.info("training")
    return build_estimator(args["output_dir"])

def gzip_reader_fn():
    return tf.TFRecordReader()

def generate_tfrecord_input_fn(paths):
    return dict(reader=gzip_reader_fn, paths=paths)
"""


def _program(tmp_path, model_source):
    package = tmp_path / "trainer"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "model.py").write_text(model_source)
    (package / "task.py").write_text(TASK)
    return package


def test_a_tf1_name_in_a_function_nothing_calls_is_no_evidence(tmp_path):
    package = _program(tmp_path, MODEL)
    assert tf1_evidence(str(package / "task.py"), roots=[str(tmp_path)]) is None


def test_the_same_name_in_code_that_runs_is_evidence(tmp_path):
    called = MODEL.replace('    tf.compat.v1.logging.info("training")\n',
                           '    generate_tfrecord_input_fn(["a"])\n')  # fmt: skip
    package = _program(tmp_path, called)
    evidence = tf1_evidence(str(package / "task.py"), roots=[str(tmp_path)])
    assert evidence == "trainer/model.py:11 uses tf.TFRecordReader"
    module_level = MODEL + "tf.logging.set_verbosity(tf.logging.INFO)\n"
    (tmp_path / "b").mkdir()
    package = _program(tmp_path / "b", module_level)
    assert tf1_evidence(str(package / "task.py"), roots=[str(tmp_path / "b")]).endswith(
        "uses tf.logging"
    )


def test_program_uncalled_nodes_follows_names_across_files():
    script = ast.parse("import helpers\nhelpers.used()\n")
    helpers = ast.parse(
        textwrap.dedent("""\
        def used():
            return chained()
        def chained():
            return 1
        def unused():
            return only_from_unused()
        def only_from_unused():
            return 2
    """)
    )
    dead = program_uncalled_nodes({"main.py": script, "helpers.py": helpers})
    dead_functions = {
        node.name
        for node in ast.walk(helpers)
        if isinstance(node, ast.FunctionDef) and id(node.body[0]) in dead["helpers.py"]
    }
    assert dead_functions == {"unused", "only_from_unused"} and dead["main.py"] == set()
    dynamic = ast.parse("import helpers\ngetattr(helpers, name)()\n")
    assert program_uncalled_nodes({"main.py": dynamic, "helpers.py": helpers}) == {
        "main.py": set(),
        "helpers.py": set(),
    }


def test_check_agrees_with_run_on_what_the_program_never_calls(tmp_path):
    from keras_estimator.migration.scanner import scan

    unused_contrib = MODEL + (
        "\ndef tfrecord_input_fn(paths):\n"
        "    return tf.contrib.learn.io.read_keyed_batch_features(paths, 8, {}, gzip_reader_fn)\n"
    )
    package = _program(tmp_path, unused_contrib)
    reports = scan([str(package / "task.py")])
    model = next(r for r in reports if r.path.endswith("model.py"))
    statuses = {f.api: f.status for f in model.findings}
    assert statuses["tf.contrib.learn.io.read_keyed_batch_features"] == "caveat"
    assert statuses["tf.TFRecordReader"] == "caveat"  # no TF1 mode, as run decides
    assert all(r.verdict != "blocked" for r in reports)
    # A library checked on its own (no script): its functions may be called by anyone.
    library = scan([str(package / "model.py")])
    assert any(f.status == "unsupported" for r in library for f in r.findings)
