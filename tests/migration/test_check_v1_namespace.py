"""`check` says where `tf.estimator` is tf.compat.v1.estimator (a compat.v1 import, or a
TF1-mode file under `run`): its canned estimators are keras_estimator.v1's, and code that
imports its estimator itself must take `from keras_estimator import v1` (the one-import
recipe's trap: the v2 classes average the loss)."""

import keras_estimator
from keras_estimator import v1
from keras_estimator.migration import scan
from keras_estimator.migration.report import verdict_text
from keras_estimator.migration.v1_namespace import V1_CANNED


def report_of(tmp_path, source, name="script.py"):
    path = tmp_path / name
    path.write_text(source)
    (report,) = scan([str(path)])
    return report


def v1_noted(report):
    return [(f.line, f.api) for f in report.findings if "keras_estimator import v1" in f.note]


def test_canned_estimators_through_compat_v1_name_keras_estimator_v1(tmp_path):
    report = report_of(tmp_path, (
        "import tensorflow.compat.v1 as tf\n"
        "est = tf.estimator.DNNClassifier([4], columns)\n"
        "spec = tf.estimator.EstimatorSpec\n"
        "base = tf.estimator.Estimator(model_fn)\n"
        "parse = tf.estimator.classifier_parse_example_spec\n"
    ))  # fmt: skip
    assert v1_noted(report) == [(2, "tf.estimator.DNNClassifier"),
                                (5, "tf.estimator.classifier_parse_example_spec")]  # fmt: skip
    finding = report.findings[0]
    assert finding.status == "supported" and "loss summed over the batch" in finding.note
    assert report.verdict == "ok"  # it runs: install() / run map it to keras_estimator.v1
    assert "from keras_estimator import v1 as estimator" in verdict_text(report)


def test_tf2_tf_estimator_is_left_alone_unless_run_reads_it_as_tf1(tmp_path):
    v2 = report_of(tmp_path, "import tensorflow as tf\nest = tf.estimator.LinearRegressor([])\n")
    assert v1_noted(v2) == [] and "keras_estimator import v1" not in verdict_text(v2)
    explicit = report_of(tmp_path, (
        "import tensorflow as tf\nest = tf.compat.v1.estimator.LinearRegressor([])\n"
    ))  # fmt: skip
    assert v1_noted(explicit) == [(2, "tf.estimator.LinearRegressor")]
    tf1_mode = report_of(tmp_path, (
        "import tensorflow as tf\n"
        "tf.logging.set_verbosity(tf.logging.INFO)\n"
        "est = tf.estimator.LinearRegressor([])\n"
    ))  # fmt: skip
    assert tf1_mode.verdict == "tf1_mode"  # run's TF1 mode: tf is tensorflow.compat.v1
    assert v1_noted(tf1_mode) == [(3, "tf.estimator.LinearRegressor")]


def test_the_noted_names_are_exactly_the_v1_classes():
    own = {name for name in v1.__all__ if getattr(v1, name) is not getattr(keras_estimator, name)}
    assert own - {"Estimator"} == V1_CANNED  # the v1 Estimator runs a model_fn the same way
