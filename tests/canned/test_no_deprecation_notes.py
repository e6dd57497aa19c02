"""Canned estimators make their feature-column calls without TensorFlow's deprecation notes
(issue 29): the notes a user sees are for the columns they made themselves, as 2.15 showed
them. A child process: TensorFlow prints each deprecation once per process."""

import os
import textwrap

from helpers import TESTS_DIR, run_python

SCRIPT = """
import sys
import numpy as np
import tensorflow as tf
import keras_estimator as ke

fc = tf.feature_column
number = fc.numeric_column("a")
colour = fc.categorical_column_with_vocabulary_list("c", ["x", "y", "z"])
deep = [number, fc.embedding_column(colour, 2), fc.indicator_column(colour)]
wide = [colour, fc.bucketized_column(number, [0.3, 0.6]), fc.crossed_column([colour, "h"], 10),
        fc.categorical_column_with_hash_bucket("h", 5)]
spec = fc.make_parse_example_spec(deep + wide)

def input_fn():
    rng = np.random.RandomState(0)
    features = {"a": rng.rand(16).astype("float32"), "c": rng.choice(["x", "y", "z"], 16),
                "h": rng.choice(["p", "q"], 16)}
    return tf.data.Dataset.from_tensor_slices((features, rng.randint(0, 2, 16))).batch(8)

sys.stderr.write("OUR CALLS FROM HERE\\n")
sys.stderr.flush()
model_dir = sys.argv[1]
est = ke.DNNLinearCombinedClassifier(model_dir=model_dir, linear_feature_columns=wide,
                                     dnn_feature_columns=deep, dnn_hidden_units=[4])
est.train(input_fn, steps=2)
est.evaluate(input_fn)
list(est.predict(lambda: input_fn().map(lambda features, labels: features)))
receiver_fn = ke.export.build_parsing_serving_input_receiver_fn(spec)
est.export_saved_model(model_dir + "/export", receiver_fn)
ke.DenseFeatures(deep)({"a": tf.constant([1.0]), "c": tf.constant(["x"])})
"""


def test_canned_estimators_log_no_deprecation_notes_of_their_own(tmp_path):
    script = tmp_path / "canned.py"
    script.write_text(textwrap.dedent(SCRIPT))
    env = {"PYTHONPATH": TESTS_DIR + ":" + os.environ.get("PYTHONPATH", "")}
    result = run_python(str(script), str(tmp_path / "model"), env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    before, ours = result.stderr.split("OUR CALLS FROM HERE", 1)
    assert "numeric_column" in before and "is deprecated" in before  # the user's own calls
    assert "is deprecated" not in ours, ours[-3000:]
