"""The package as a user meets it: the demo command, the import-time checks, the namespace."""

from helpers import TESTS_DIR, run_python

import keras_estimator


def test_public_namespace():
    assert set(keras_estimator.__all__) >= {"Estimator", "EstimatorSpec", "ModeKeys", "RunConfig"}
    assert keras_estimator.__version__


def test_demo_command_trains_evaluates_and_predicts(tmp_path):
    result = run_python(
        "-m", "keras_estimator", "demo", "--steps", "300", "--model-dir", str(tmp_path)
    )
    assert result.returncode == 0, result.stderr[-2000:]
    out = result.stdout
    assert "training         300 steps" in out
    accuracy = float(out.split("eval accuracy")[1].split()[0])
    assert accuracy > 0.8
    assert (tmp_path / "checkpoint").exists()
    assert "model.ckpt-300" in out


def test_import_fails_clearly_on_another_keras_backend():
    result = run_python("-c", "import keras_estimator", env={"KERAS_BACKEND": "numpy"})
    assert result.returncode != 0
    assert "keras_estimator needs the TensorFlow Keras backend" in result.stderr
    assert "KERAS_BACKEND=tensorflow" in result.stderr


def test_import_fails_clearly_with_legacy_keras_switch():
    result = run_python("-c", "import keras_estimator", env={"TF_USE_LEGACY_KERAS": "1"})
    assert result.returncode != 0
    assert "Unset TF_USE_LEGACY_KERAS" in result.stderr


def test_progress_bar_is_off_in_batch_runs_and_can_be_forced(tmp_path):
    script = tmp_path / "train.py"
    tests_dir, model_dir = TESTS_DIR, str(tmp_path / "m")
    script.write_text(
        "import sys\n"
        f"sys.path.insert(0, {tests_dir!r})\n"
        "import keras_estimator\n"
        "from helpers import classifier_model_fn, dataset_input_fn\n"
        "import numpy as np\n"
        "x = np.random.rand(64, 8).astype('float32'); y = np.zeros(64, 'int64')\n"
        f"est = keras_estimator.Estimator(classifier_model_fn, {model_dir!r}, params={{}})\n"
        "est.train(dataset_input_fn(x, y, 8, repeat=True), steps=20)\n"
    )
    quiet = run_python(str(script))
    assert quiet.returncode == 0, quiet.stderr[-2000:]
    assert "20/20" not in quiet.stdout  # stdout is a pipe: no bar
    shown = run_python(str(script), env={"KERAS_ESTIMATOR_PROGRESS": "1"})
    assert shown.returncode == 0, shown.stderr[-2000:]
    assert "20/20" in shown.stdout and "loss" in shown.stdout


def test_log_lines_follow_tf_logging_set_verbosity(tmp_path):
    # Legacy scripts ask for the estimator's log lines through tf.logging, as with tf.estimator.
    tests_dir = TESTS_DIR
    body = (
        "import sys\n"
        f"sys.path.insert(0, {tests_dir!r})\n"
        "import numpy as np\n"
        "import tensorflow.compat.v1 as tf\n"
        "import keras_estimator\n"
        "from helpers import classifier_model_fn, dataset_input_fn\n"
        "{verbosity}"
        "x = np.random.rand(64, 8).astype('float32'); y = np.zeros(64, 'int64')\n"
        "est = keras_estimator.Estimator(classifier_model_fn, sys.argv[1], params={{}})\n"
        "est.train(dataset_input_fn(x, y, 8, repeat=True), steps=3)\n"
    )
    quiet, verbose = tmp_path / "quiet.py", tmp_path / "verbose.py"
    quiet.write_text(body.format(verbosity=""))
    verbose.write_text(body.format(verbosity="tf.logging.set_verbosity(tf.logging.INFO)\n"))
    shown = run_python(str(verbose), str(tmp_path / "a"))
    assert shown.returncode == 0, shown.stderr[-2000:]
    assert "loss = " in shown.stderr and ", step = 0" in shown.stderr
    assert "Saving checkpoints for 3 into" in shown.stderr
    hidden = run_python(str(quiet), str(tmp_path / "b"))
    assert hidden.returncode == 0, hidden.stderr[-2000:]
    assert "loss = " not in hidden.stderr and "Saving checkpoints" not in hidden.stderr
