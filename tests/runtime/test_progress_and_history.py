"""The progress bar in a real Jupyter kernel, and `Estimator.history` read back from
model_dir's event files (a kernel restart, or another process's run)."""

import os
import re
import textwrap

import nbformat
import numpy as np
import pytest
import tensorflow as tf
from helpers import make_estimator, run_python
from nbclient import NotebookClient

import keras_estimator as estimator
from keras_estimator.runtime.progress import TrainingProgress, set_progress_bar

x = np.random.RandomState(0).rand(256, 4).astype("float32")
y = (x[:, 0] * 3).astype("int32").clip(0, 2)


def rendered(text):
    """What a terminal (or Jupyter's output area) shows for `text`: `\\r` returns to the
    start of the line (the next characters overwrite it), `\\b` deletes one character;
    colours are dropped."""
    lines, line = [], ""
    for char in re.sub(r"\x1b\[[0-9;]*m", "", text):
        if char == "\n":
            lines.append(line)
            line = ""
        elif char == "\r":
            line = ""
        elif char == "\b":
            line = line[:-1]
        else:
            line += char
    return lines + ([line] if line else [])


def _bar_texts(cell):
    """The bar's display outputs of a cell, in order (emptied ones are "")."""
    return [o.data["text/plain"] for o in cell.outputs if o.output_type == "display_data"]


def _html_lines(html):
    """The text lines nbconvert's HTML shows (tags dropped, entities decoded)."""
    import html as html_lib

    body = html.split("<body", 1)[1]
    body = re.sub(r"<(script|style)\b.*?</\1>", "", body, flags=re.S)
    return html_lib.unescape(re.sub(r"<[^>]+>", "", body)).splitlines()


def test_one_bar_line_in_a_saved_notebook(tmp_path):
    """Executed in a real kernel, saved and rendered by nbconvert's default HTML exporter:
    each train() shows one bar line, its final state, with log records above it."""
    from nbconvert import HTMLExporter

    cells = [
        f"""
        import logging
        import numpy as np
        import tensorflow.compat.v1 as tf
        import keras_estimator as ke
        from helpers import classifier_model_fn
        x = np.random.RandomState(0).rand(256, 4).astype("float32")
        y = (x[:, 0] * 3).astype("int32").clip(0, 2)
        train_fn = ke.inputs.numpy_input_fn({{"x": x}}, y, batch_size=16, num_epochs=None,
                                            shuffle=True)
        est = ke.Estimator(classifier_model_fn, model_dir={str(tmp_path / "model")!r},
                           config=ke.RunConfig(log_step_count_steps=50), params={{}})
        """,
        "est.train(train_fn, steps=300); None",
        # Records in the middle of a bar (a warning; INFO lines from TensorFlow's logger,
        # which is at INFO in a kernel) go above it, on lines of their own.
        """
        class LogEvery50(ke.SessionRunHook):
            def before_run(self, run_context):
                return ke.SessionRunArgs(tf.train.get_global_step())
            def after_run(self, run_context, run_values):
                if run_values.results % 50 == 0:
                    tf.logging.info("hook saw step %d", run_values.results)
                if run_values.results == 450:
                    logging.getLogger("keras_estimator").warning("halfway there")
        est.train(train_fn, steps=300, hooks=[LogEvery50()]); None
        """,
    ]
    notebook = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell(textwrap.dedent(c)) for c in cells]
    )
    from helpers import TESTS_DIR

    NotebookClient(notebook, timeout=300, kernel_name="python3", resources={
        "metadata": {"path": TESTS_DIR}}).execute()  # fmt: skip
    everything = [o.get("text", "") for c in notebook.cells for o in c.outputs]
    assert not any("INFO:keras_estimator" in text for text in everything)  # ours are off
    plain, logged = notebook.cells[1], notebook.cells[2]
    # No bar in stdout (no \r / \b frames): one display output, left at its final state.
    assert not any(o.output_type == "stream" for o in plain.outputs), plain.outputs
    (bar,) = _bar_texts(plain)
    assert bar.startswith("300/300 ━") and "- loss: " in bar and "global_step" not in bar, bar
    # Records end the bar's output (emptied), print, and the bar goes on below them: the last
    # output is the final bar, every record is above it.
    assert logged.outputs[-1].output_type == "display_data", logged.outputs
    assert [t for t in _bar_texts(logged) if t] == [logged.outputs[-1].data["text/plain"]]
    assert logged.outputs[-1].data["text/plain"].startswith("300/300 ")
    records = "".join(o.text for o in logged.outputs if o.output_type == "stream")
    assert records.count("hook saw step") == 6 and records.count("halfway there") == 1, records

    html, _ = HTMLExporter().from_notebook_node(notebook)
    lines = _html_lines(html)
    assert sum("/300 " in line for line in lines) == 2, [ln for ln in lines if "/300" in ln]
    assert [line.strip()[:7] for line in lines if "/300 " in line] == ["300/300"] * 2
    assert sum("hook saw step" in line and "%d" not in line for line in lines) == 6
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f]|\[[0-9;]*m", "\n".join(lines))


def test_the_final_line_is_drawn_once(capsys):
    set_progress_bar(True)
    try:
        progress = TrainingProgress(0, 10)
        progress.update(10, 0.5)
        progress.close(10, 0.5)
    finally:
        set_progress_bar(None)
    lines = rendered(capsys.readouterr().out)
    assert sum("10/10" in line for line in lines) == 1
    # Keras' Progbar in a terminal; the step count is the bar's, not a float metric.
    assert "━" in lines[-1] and "loss: 0.5000" in lines[-1] and "global_step" not in lines[-1]


@pytest.fixture
def trained_elsewhere(tmp_path):
    """A model_dir trained and evaluated by another Python process."""
    script = tmp_path / "train.py"
    script.write_text(
        textwrap.dedent(f"""
        import numpy as np
        from helpers import dataset_input_fn, make_estimator
        x = np.random.RandomState(0).rand(256, 4).astype("float32")
        y = (x[:, 0] * 3).astype("int32").clip(0, 2)
        est = make_estimator({str(tmp_path / "model")!r}, save_summary_steps=10)
        est.train(dataset_input_fn(x, y, batch_size=16, repeat=True), steps=40)
        est.evaluate(dataset_input_fn(x, y))
        est.evaluate(dataset_input_fn(x, y), name="holdout")
        """)
    )
    from helpers import TESTS_DIR

    result = run_python(
        str(script),
        env={"PYTHONPATH": TESTS_DIR + ":" + os.environ.get("PYTHONPATH", "")},
    )
    assert result.returncode == 0, result.stderr
    return tmp_path / "model"


def test_history_is_read_from_model_dir(trained_elsewhere):
    est = make_estimator(str(trained_elsewhere))
    history = est.history
    assert sorted(history.loss) == [1, 11, 21, 31]
    assert all(np.isfinite(v) for v in history.loss.values())
    assert list(history.evaluations) == [40]
    assert set(history.evaluations[40]) == {"accuracy", "loss"}
    assert list(history.evaluation("holdout")) == [40]
    assert "evaluations: {'eval': 1, 'holdout': 1}" in repr(history)


def test_this_sessions_calls_add_to_what_model_dir_holds(trained_elsewhere):
    from helpers import dataset_input_fn

    est = make_estimator(str(trained_elsewhere), save_summary_steps=10)
    est.train(dataset_input_fn(x, y, batch_size=16, repeat=True), steps=10)
    results = est.evaluate(dataset_input_fn(x, y))
    assert sorted(est.history.evaluations) == [40, 50]
    assert est.history.evaluations[50]["accuracy"] == pytest.approx(results["accuracy"])
    assert max(est.history.loss) == 50


def test_plot_history_draws_after_a_restart(trained_elsewhere):
    import matplotlib  # in the test extra

    matplotlib.use("Agg")
    ax = estimator.plot_history(make_estimator(str(trained_elsewhere)), "accuracy")
    labels = [line.get_label() for line in ax.get_lines()]
    assert labels == ["training loss", "eval accuracy"]


def test_reading_history_and_eval_metrics_logs_no_deprecation(tmp_path):
    """`est.history` and early stopping's `read_eval_metrics` read event files with tf.data
    (tf.compat.v1.train.summary_iterator logged "tf_record_iterator ... is deprecated"). A
    child process: TensorFlow logs each deprecation once per process."""
    script = tmp_path / "read.py"
    script.write_text(
        textwrap.dedent(f"""
        import numpy as np
        import tensorflow as tf
        import keras_estimator as ke
        from helpers import dataset_input_fn, make_estimator
        x = np.random.RandomState(0).rand(64, 4).astype("float32")
        y = (x[:, 0] * 3).astype("int32").clip(0, 2)
        est = make_estimator({str(tmp_path / "model")!r}, save_summary_steps=1)
        est.train(dataset_input_fn(x, y, repeat=True), steps=3)
        est.evaluate(dataset_input_fn(x, y))
        print("READING", flush=True)
        assert sorted(est.history.loss) == [1, 2, 3], est.history.loss
        assert list(ke.experimental.read_eval_metrics(est.eval_dir())) == [3]
        with tf.Graph().as_default():  # TF1 graph mode around the call
            assert list(make_estimator({str(tmp_path / "model")!r}).history.evaluations) == [3]
        """)
    )
    from helpers import TESTS_DIR

    result = run_python(
        str(script), env={"PYTHONPATH": TESTS_DIR + ":" + os.environ.get("PYTHONPATH", "")}
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "is deprecated" not in result.stderr, result.stderr[-3000:]


def test_plot_history_overlays_are_labelled_by_run(tmp_path):
    import matplotlib
    from helpers import dataset_input_fn

    matplotlib.use("Agg")
    runs = []
    for name in ("run_a", "run_b"):
        est = make_estimator(str(tmp_path / name), save_summary_steps=1)
        est.train(dataset_input_fn(x, y, batch_size=64, repeat=True), steps=2)
        est.evaluate(dataset_input_fn(x, y, batch_size=128))
        runs.append(est)
    ax = estimator.plot_history(runs[0], "accuracy")
    assert [line.get_label() for line in ax.get_lines()] == ["training loss", "eval accuracy"]
    estimator.plot_history(runs[1], "accuracy", ax=ax)
    labels = [line.get_label() for line in ax.get_lines()]
    assert labels == ["run_a: training loss", "run_a: eval accuracy",
                      "run_b: training loss", "run_b: eval accuracy"]  # fmt: skip
    assert [t.get_text() for t in ax.get_legend().get_texts()] == labels
    ax = runs[0].history.plot(label="baseline")
    assert [line.get_label() for line in ax.get_lines()] == [
        "baseline: training loss", "baseline: eval loss"]  # fmt: skip


def test_a_string_metric_is_returned_and_written_but_not_charted(tmp_path):
    # AdaNet reports its architecture as a serialized text Summary in eval_metric_ops.
    v1 = tf.compat.v1

    def model_fn(features, labels, mode):
        w = v1.get_variable("w", [])
        loss = tf.reduce_mean(tf.square(w - features["x"]))
        train_op = v1.train.GradientDescentOptimizer(0.1).minimize(loss, v1.train.get_global_step())
        architecture = v1.summary.text("architecture", tf.constant("| dnn |"))
        return estimator.EstimatorSpec(mode, loss=loss, train_op=train_op, eval_metric_ops={
            "architecture/adanet": (architecture, tf.no_op())
        })  # fmt: skip

    est = estimator.Estimator(model_fn, model_dir=str(tmp_path))
    x = np.ones(4, "float32")

    def input_fn():
        return tf.data.Dataset.from_tensor_slices({"x": x}).batch(2)

    est.train(input_fn, steps=1)
    results = est.evaluate(input_fn)
    parsed = v1.Summary.FromString(results["architecture/adanet"])
    assert parsed.value[0].tensor.string_val == [b"| dnn |"]
    assert "architecture/adanet" not in est.history.evaluations[1]
    assert "loss" in est.history.evaluations[1]
