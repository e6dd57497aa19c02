"""Drop-in mode: `install()` / `uninstall()`, the `tf.contrib` pieces, and
`python -m keras_estimator run` on unmodified legacy scripts (real subprocesses)."""

import importlib
import importlib.metadata
import os
import sys
import threading

import numpy as np
import pytest
import tensorflow as tf
from helpers import SCRIPTS, run_python

import keras_estimator as estimator

LEGACY = os.path.join(SCRIPTS, "legacy")
v1 = tf.compat.v1


def test_install_exposes_legacy_namespaces_and_uninstall_removes_them(installed):
    assert tf.estimator is estimator and v1.estimator is estimator.v1  # 2.15's v1 classes
    assert v1.estimator.tpu.TPUEstimator is estimator.tpu.TPUEstimator
    assert v1.estimator.inputs.numpy_input_fn is estimator.inputs.numpy_input_fn
    assert issubclass(v1.estimator.experimental.InMemoryEvaluatorHook, v1.train.SessionRunHook)
    from tensorflow.contrib import tpu as contrib_tpu
    from tensorflow.python.estimator import run_config
    from tensorflow_estimator.python.estimator import model_fn as model_fn_lib
    from tensorflow_estimator.python.estimator.canned import dnn
    from tensorflow_estimator.python.estimator.estimator import Estimator
    from tensorflow_estimator.python.estimator.export import export as export_lib

    # As in 2.15, the modules hold the v1 classes under the plain names (V2 for tf.estimator's).
    assert Estimator is estimator.v1.Estimator
    assert model_fn_lib.EstimatorSpec is estimator.EstimatorSpec
    assert model_fn_lib.ModeKeys is estimator.ModeKeys
    assert export_lib.ServingInputReceiver is estimator.export.ServingInputReceiver
    assert dnn.DNNClassifier is estimator.v1.DNNClassifier
    assert dnn.DNNClassifierV2 is estimator.DNNClassifier
    assert run_config.RunConfig is estimator.RunConfig
    assert contrib_tpu.TPUEstimator is estimator.tpu.TPUEstimator
    assert importlib.import_module("tensorflow_estimator").estimator is estimator

    estimator.install()  # idempotent
    estimator.uninstall()
    assert not hasattr(tf, "estimator") and not hasattr(v1, "estimator")
    assert not hasattr(v1, "contrib") and not hasattr(tf, "contrib")
    assert not any(
        name.startswith(
            ("tensorflow_estimator", "tensorflow.python.estimator", "tensorflow.contrib")
        )
        for name in sys.modules
    )
    with pytest.raises(ImportError):
        importlib.import_module("tensorflow_estimator")
    estimator.uninstall()  # idempotent


def test_install_is_thread_safe():
    try:
        threads = [threading.Thread(target=estimator.install) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert tf.estimator is estimator
    finally:
        estimator.uninstall()
    assert not hasattr(tf, "estimator")


def test_contrib_pieces(installed, tmp_path):
    contrib = v1.contrib
    assert contrib.cluster_resolver.TPUClusterResolver is (
        tf.distribute.cluster_resolver.TPUClusterResolver
    )
    optimizer = v1.train.AdamOptimizer(0.1)
    assert contrib.tpu.CrossShardOptimizer(optimizer) is optimizer

    # A BERT-era TPUEstimator written against tf.contrib.tpu trains on CPU.
    def tpu_model_fn(features, labels, mode, params):
        logits = v1.layers.dense(features["x"], 1)
        loss = tf.reduce_mean(tf.square(logits[:, 0] - labels))
        train_op = contrib.tpu.CrossShardOptimizer(v1.train.GradientDescentOptimizer(0.1)).minimize(
            loss, v1.train.get_global_step()
        )
        return contrib.tpu.TPUEstimatorSpec(mode, loss=loss, train_op=train_op)

    config = contrib.tpu.RunConfig(
        model_dir=str(tmp_path / "tpu"),
        tpu_config=contrib.tpu.TPUConfig(
            iterations_per_loop=2,
            per_host_input_for_training=contrib.tpu.InputPipelineConfig.PER_HOST_V2,
        ),
    )
    tpu_est = contrib.tpu.TPUEstimator(tpu_model_fn, config=config, use_tpu=False,
                                       train_batch_size=8)  # fmt: skip
    xs = np.ones((32, 2), np.float32)

    def tpu_input_fn(params):
        return (
            tf.data.Dataset.from_tensor_slices(({"x": xs}, xs[:, 0]))
            .repeat()
            .batch(params["batch_size"])
        )

    tpu_est.train(tpu_input_fn, max_steps=4)
    assert tpu_est.get_variable_value("global_step") == 4

    dataset = tf.data.Dataset.range(10).apply(
        contrib.data.map_and_batch(lambda i: i * 2, batch_size=4, drop_remainder=True)
    )
    assert [b.tolist() for b in dataset.as_numpy_iterator()] == [[0, 2, 4, 6], [8, 10, 12, 14]]

    x = np.random.RandomState(0).randn(8, 5).astype(np.float32)

    def model_fn(features, labels, mode):
        normed = contrib.layers.layer_norm(features["x"], begin_norm_axis=-1,
                                           begin_params_axis=-1)  # fmt: skip
        scoped = contrib.layers.layer_norm(normed, scope="bert/embeddings/LayerNorm")
        if mode == estimator.ModeKeys.PREDICT:
            return estimator.EstimatorSpec(mode, predictions={"normed": normed})
        loss = tf.reduce_mean(tf.square(scoped - labels))
        train_op = v1.train.GradientDescentOptimizer(0.1).minimize(loss, v1.train.get_global_step())
        return estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

    est = estimator.Estimator(model_fn, str(tmp_path))
    est.train(lambda: tf.data.Dataset.from_tensor_slices(({"x": x}, x)).batch(8), steps=1)
    names = est.get_variable_names()
    for name in ("LayerNorm/beta", "LayerNorm/gamma", "bert/embeddings/LayerNorm/gamma"):
        assert name in names
    # Before training gamma = 1, beta = 0: the output is the normalized input.
    fresh = estimator.Estimator(model_fn, str(tmp_path / "fresh"))
    got = next(iter(fresh.predict(lambda: tf.data.Dataset.from_tensor_slices({"x": x}).batch(8))))
    want = (x[0] - x[0].mean()) / np.sqrt(x[0].var() + 1e-12)
    np.testing.assert_allclose(got["normed"], want, rtol=1e-4, atol=1e-5)


def run_cli(args, cwd=None, timeout=300):
    return run_python("-m", "keras_estimator", "run", *args, cwd=cwd, timeout=timeout)


def test_unmodified_classic_script_runs_end_to_end(tmp_path):
    model_dir = str(tmp_path / "model")
    result = run_cli([os.path.join(LEGACY, "classic_estimator_script.py"),
                      f"--model_dir={model_dir}", "--train_steps=200"])  # fmt: skip
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-3000:]
    assert "ACCURACY" in output and "Saving checkpoints for 200" in output
    export_dir = output.split("EXPORTED ")[1].split()[0]
    served = tf.saved_model.load(export_dir).signatures["serving_default"](
        x=tf.constant([[3.0, 0.0, 0.0, 0.0]])
    )
    assert int(served["class"].numpy()[0]) == 0
    assert tf.train.latest_checkpoint(model_dir).endswith("model.ckpt-200")


def test_run_passes_argv_exit_status_and_supports_modules(tmp_path):
    script = tmp_path / "flags_script.py"
    script.write_text(
        "import sys\n"
        "from absl import app, flags\n"
        "import tensorflow.compat.v1 as tf\n"
        "flags.DEFINE_integer('code', 0, 'exit code')\n"
        "FLAGS = flags.FLAGS\n"
        "def main(argv):\n"
        "    print('NAME', __name__, 'ARGV', argv[1:], 'EST', tf.estimator.Estimator.__module__)\n"
        "    return FLAGS.code\n"
        "if __name__ == '__main__':\n"
        "    app.run(main)\n"
    )
    result = run_cli([str(script), "--code=7", "extra"])
    assert result.returncode == 7, result.stderr[-2000:]
    assert "NAME __main__ ARGV ['extra'] EST keras_estimator.estimator.estimator" in result.stdout

    (tmp_path / "legacy_pkg").mkdir()
    (tmp_path / "legacy_pkg" / "__init__.py").write_text("")
    (tmp_path / "legacy_pkg" / "job.py").write_text(
        "import sys\nimport tensorflow as tf\n"
        "print('MODULE', __name__, sys.argv[1:], tf.estimator.RunConfig().keep_checkpoint_max)\n"
        "raise RuntimeError('boom')\n"
    )
    result = run_cli(["-m", "legacy_pkg.job", "a", "b"], cwd=str(tmp_path))
    assert "MODULE __main__ ['a', 'b'] 5" in result.stdout
    assert result.returncode == 1 and "RuntimeError: boom" in result.stderr

    missing = run_cli([str(tmp_path / "nope.py")])
    assert missing.returncode == 2 and "cannot find the script" in missing.stderr


def test_console_script_is_declared():
    scripts = importlib.metadata.entry_points(group="console_scripts")
    assert any(ep.name == "keras-estimator" and ep.value == "keras_estimator.cli.main:main"
               for ep in scripts)  # fmt: skip


def test_unprovided_legacy_modules_fail_to_import_and_leave_nothing_behind():
    estimator.install()
    try:
        with pytest.raises(ModuleNotFoundError, match="keras_estimator.install\\(\\) provides"):
            importlib.import_module("tensorflow_estimator.python.estimator.canned.heads")
    finally:
        estimator.uninstall()
    assert not [n for n in sys.modules if n.startswith("tensorflow_estimator")]


def test_tensorflow_compat_v2_imported_after_install_holds_the_estimator():
    """AdaNet does `import tensorflow.compat.v2 as tf` and subclasses tf.estimator.Estimator:
    the module is first imported after install() there (a fresh process)."""
    script = (
        "import keras_estimator; keras_estimator.install()\n"
        "import tensorflow.compat.v2 as tf\n"
        "assert tf.estimator is keras_estimator, tf.estimator\n"
        "keras_estimator.uninstall()\n"
        "assert not hasattr(tf, 'estimator')\n"
        "print('OK')\n"
    )
    result = run_python("-c", script)
    assert result.returncode == 0 and "OK" in result.stdout, result.stderr[-2000:]


def test_estimator_training_and_private_switches_as_easyrec_uses_them(tmp_path):
    """EasyRec imports TF 2.15's estimator_training and switches eager execution off through
    TensorFlow's private path at import: both are answered as on tf.compat.v1 (a fresh
    process, so the switch really is the private module's)."""
    script = (
        "import keras_estimator; keras_estimator.install()\n"
        "from tensorflow.python.framework.ops import disable_eager_execution\n"
        "disable_eager_execution()\n"
        "import tensorflow as tf\n"
        "assert tf.executing_eagerly()\n"
        "from tensorflow.python.distribute import estimator_training\n"
        "assert not estimator_training.should_run_distribute_coordinator(None)\n"
        "keras_estimator.uninstall()\n"
        "import sys\n"
        "assert 'tensorflow.python.distribute.estimator_training' not in sys.modules\n"
        "print('OK')\n"
    )
    result = run_python("-c", script)
    assert result.returncode == 0 and "OK" in result.stdout, result.stderr[-2000:]
    assert "disable_eager_execution() called" in result.stderr


def test_the_tracking_modules_tensorflow_moved_import_from_where_they_are_now():
    """AdaNet imports graph_view from TF <= 2.10's tensorflow.python.training.tracking."""
    script = (
        "import keras_estimator; keras_estimator.install()\n"
        "from tensorflow.python.training.tracking import graph_view, base\n"
        "from tensorflow.python.checkpoint import graph_view as moved\n"
        "from tensorflow.python.trackable import base as moved_base\n"
        "assert graph_view is moved and base is moved_base\n"
        "assert graph_view.ObjectGraphView\n"
        "keras_estimator.uninstall()\n"
        "import sys\n"
        "assert 'tensorflow.python.training.tracking' not in sys.modules\n"
        "print('OK')\n"
    )
    result = run_python("-c", script)
    assert result.returncode == 0 and "OK" in result.stdout, result.stderr[-2000:]
