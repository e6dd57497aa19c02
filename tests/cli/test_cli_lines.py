"""What the command prints (issue 29): each of keras_estimator's log lines once, under `demo
--verbose` (the CLI's basicConfig beside TensorFlow's handler) and under `run` of a script
that calls `tf.app.run` (absl's handler beside TensorFlow's); a demo re-run on a finished
model_dir says it trained nothing; a demo without --model-dir leaves no temporary folder."""

import collections
import os
import subprocess
import sys
import textwrap

from helpers import ROOT


def python(*args, env=None, timeout=300, cwd=ROOT):
    child = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", **(env or {}))
    return subprocess.run([sys.executable, *args], capture_output=True, text=True,
                          timeout=timeout, env=child, cwd=cwd)  # fmt: skip


def our_lines(stderr, *markers):
    """How many times each of our log lines with one of `markers` was printed."""
    return collections.Counter(
        line.split("] ", 1)[-1].split("INFO ", 1)[-1].split("INFO:keras_estimator:", 1)[-1]
        for line in stderr.splitlines()
        if any(marker in line for marker in markers)
    )


def test_demo_verbose_prints_each_line_once_and_removes_its_temporary_folder(tmp_path):
    temp = tmp_path / "temp"
    temp.mkdir()
    result = python("-m", "keras_estimator", "demo", "--steps", "3", "--verbose",
                    env={"TMPDIR": str(temp)})  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    lines = our_lines(result.stderr, "Saving checkpoints for", "Loss for final step", "loss = ")
    assert len(lines) >= 4 and set(lines.values()) == {1}, result.stderr[-3000:]
    assert "INFO:keras_estimator:" not in result.stderr  # TensorFlow's handler did not print it
    assert "  training         3 steps in " in result.stdout, result.stdout
    assert "keras_estimator_demo_" in result.stdout and "now removed" in result.stdout
    assert [name for name in os.listdir(temp) if name.startswith("keras_estimator_demo_")] == []


def test_a_demo_rerun_on_a_finished_model_dir_says_it_trained_nothing(tmp_path):
    from keras_estimator.demo import format_report, run_demo

    run_demo(str(tmp_path), steps=2)
    report = format_report(run_demo(str(tmp_path), steps=2))
    (training,) = [line for line in report.splitlines() if "training" in line]
    assert "skipped: model_dir is already at step 2" in training and "steps/s" not in training
    assert "a larger --steps trains on" in training
    assert "removed" not in report and os.path.exists(tmp_path / "checkpoint")


def test_run_of_a_tf_app_run_script_prints_each_of_our_lines_once(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent(f"""
        import numpy as np
        import tensorflow as tf

        def model_fn(features, labels, mode):
            logits = tf.layers.dense(features["x"], 2)
            loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
            train_op = tf.train.GradientDescentOptimizer(0.1).minimize(
                loss, tf.train.get_global_step())
            return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

        def input_fn():
            x = np.random.rand(32, 3).astype("float32")
            y = (x[:, 0] > 0.5).astype("int32")
            return tf.data.Dataset.from_tensor_slices(({{"x": x}}, y)).repeat().batch(8)

        def main(_):
            tf.logging.set_verbosity(tf.logging.INFO)
            tf.estimator.Estimator(model_fn, model_dir={str(tmp_path / "model")!r}).train(
                input_fn, steps=3)

        if __name__ == "__main__":
            tf.app.run(main)
        """))  # fmt: skip
    result = python("-m", "keras_estimator", "run", str(script), cwd=str(tmp_path))
    assert result.returncode == 0, result.stderr[-3000:]
    lines = our_lines(result.stderr, "Saving checkpoints for", "Loss for final step", "loss = ")
    assert len(lines) >= 4 and set(lines.values()) == {1}, result.stderr[-3000:]
