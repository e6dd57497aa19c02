"""`check` agrees with `run` on Keras weight files: tf.keras 2 saved weights to a TensorFlow
checkpoint at a path without a suffix (TensorFlow's r1 Keras guide:
`model.save_weights('./weights/my_model')`); Keras 3, `tf.keras` on TensorFlow 2.21, writes
only `.weights.h5` files and reads only `.weights.h5` / `.weights.json` / `.keras` / `.h5`
ones. Such a path blocks, saying what Keras 3 raises and the path to use instead."""

import textwrap

from helpers import run_python

from keras_estimator.migration import exit_status, scan

GUIDE = """\
import numpy as np
import tensorflow.compat.v1 as tf
from tensorflow.keras import layers

model = tf.keras.Sequential([layers.Dense(4, activation="relu", input_shape=(3,)),
                             layers.Dense(2)])
model.compile(optimizer="sgd", loss="mse")
model.fit(np.ones([8, 3]), np.zeros([8, 2]), epochs=1, verbose=0)
model.save_weights(SAVED)
model.load_weights(LOADED)
print("restored", len(model.get_weights()))
"""


def guide(tmp_path, saved, loaded):
    path = tmp_path / "keras_guide.py"
    path.write_text(GUIDE.replace("SAVED", repr(saved)).replace("LOADED", repr(loaded)))
    (report,) = scan([str(path)])
    return path, report


def weight_findings(report):
    return [(f.line, f.api, f.status) for f in report.findings if "weights" in f.api]


def test_a_checkpoint_path_blocks_and_run_fails_on_it(tmp_path):
    path, report = guide(tmp_path, "./weights/my_model", "./weights/my_model")
    assert weight_findings(report) == [
        (9, "Model.save_weights", "unsupported"),
        (10, "Model.load_weights", "unsupported"),
    ]
    saved = report.findings[-2]
    assert "save_weights('./weights/my_model') raises ValueError" in saved.note
    assert "The filename must end in `.weights.h5`" in saved.note
    assert "'./weights/my_model.weights.h5'" in saved.replacement
    assert "os.makedirs('./weights', exist_ok=True)" in saved.replacement  # not made for it
    assert exit_status([report]) == 1
    check = run_python("-m", "keras_estimator", "check", str(path), cwd=str(tmp_path))
    assert check.returncode == 1
    assert "keras_guide.py:9: [UNSUPPORTED] Model.save_weights - Keras 3 writes" in check.stdout

    done = run_python("-m", "keras_estimator", "run", str(path), cwd=str(tmp_path))
    assert done.returncode != 0
    assert "The filename must end in `.weights.h5`" in done.stderr


def test_loading_a_checkpoint_path_fails_as_check_says(tmp_path):
    path, report = guide(tmp_path, "my_model.weights.h5", "my_model")
    assert weight_findings(report) == [(10, "Model.load_weights", "unsupported")]
    assert 'raises ValueError "File format not supported"' in report.findings[-1].note

    done = run_python("-m", "keras_estimator", "run", str(path), cwd=str(tmp_path))
    assert done.returncode != 0
    assert "File format not supported" in done.stderr


def test_weights_h5_files_run(tmp_path):
    path, report = guide(tmp_path, "my_model.weights.h5", "my_model.weights.h5")
    assert weight_findings(report) == [] and exit_status([report]) == 0

    done = run_python("-m", "keras_estimator", "run", str(path), cwd=str(tmp_path))
    assert done.returncode == 0, done.stderr[-2000:]
    assert "restored 4" in done.stdout


def test_how_the_path_is_read(tmp_path):
    path = tmp_path / "paths.py"
    path.write_text(
        textwrap.dedent("""\
        import os
        import keras
        import tensorflow as tf

        model.save_weights(f"{out}/model.weights.h5")
        model.save_weights(os.path.join(out, "model"))
        model.save_weights(out + "/model.h5")
        model.save_weights(checkpoint_path)
        model.save_weights("model.weights.json", max_shard_size=1)
        model.save_weights("model.weights.h5", save_format="h5")
        keras.saving.save_weights(model, "model")
        model.load_weights("legacy.h5")
        model.load_weights("model.keras")
        model.load_weights(filepath="ckpt/model-1000")
    """)
    )
    (report,) = scan([str(path)])
    assert weight_findings(report) == [
        (6, "Model.save_weights", "unsupported"),  # os.path.join(..., "model")
        (7, "Model.save_weights", "unsupported"),  # ends ".h5", not ".weights.h5"
        (10, "Model.save_weights", "unsupported"),  # save_format: a TypeError
        (11, "Model.save_weights", "unsupported"),  # keras.saving's function: (model, path)
        (14, "Model.load_weights", "unsupported"),
    ]
    assert "a path ending 'model'" in report.findings[0].note
    assert "unexpected keyword argument 'save_format'" in report.findings[2].note

    # Keras 2 (tf_keras) wrote checkpoints; a file without Keras is not judged.
    for source in ("import tf_keras\nm.save_weights('ckpt')\n", "m.save_weights('ckpt')\n"):
        path.write_text(source)
        (report,) = scan([str(path)])
        assert report.findings == []
