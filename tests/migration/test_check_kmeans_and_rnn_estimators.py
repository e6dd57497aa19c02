"""`keras-estimator check` reports tf.estimator 2.15's KMeans and RNN estimators (and the
sequential head RNNEstimator(return_sequences=True) takes) as supported, however a script
names them."""

import json

from helpers import run_python

TF2_SCRIPT = """\
import tensorflow as tf
from tensorflow.estimator.experimental import RNNEstimator
from tensorflow_estimator.python.estimator.head import sequential_head

kmeans = tf.compat.v1.estimator.experimental.KMeans(num_clusters=2)
classifier = tf.estimator.experimental.RNNClassifier([], units=[4], return_sequences=True)
head = sequential_head.SequentialHeadWrapper(tf.estimator.BinaryClassHead())
estimator = RNNEstimator(head, [], units=[4], return_sequences=True)
"""

TF1_SCRIPT = """\
import tensorflow.compat.v1 as tf
from tensorflow.contrib.factorization import KMeansClustering

contrib = tf.contrib.factorization.KMeansClustering(num_clusters=2)
imported = KMeansClustering(num_clusters=3)
v1 = tf.estimator.experimental.KMeans(num_clusters=2)
"""


def test_kmeans_rnn_classifier_and_rnn_estimator_are_reported_supported(tmp_path):
    (tmp_path / "tf2.py").write_text(TF2_SCRIPT)
    (tmp_path / "tf1.py").write_text(TF1_SCRIPT)
    result = run_python("-m", "keras_estimator", "check", str(tmp_path), "--format", "json",
                        timeout=120, env={"TF_CPP_MIN_LOG_LEVEL": "3"})  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads(result.stdout)
    found = {(f["path"].rsplit("/", 1)[-1], f["line"], f["api"]): f["status"]
             for f in report["findings"]}  # fmt: skip
    assert found == {
        ("tf2.py", 2, "tf.estimator.experimental.RNNEstimator"): "supported",
        ("tf2.py", 3, "tensorflow_estimator"): "supported",
        ("tf2.py", 5, "tf.estimator.experimental.KMeans"): "supported",
        ("tf2.py", 6, "tf.estimator.experimental.RNNClassifier"): "supported",
        ("tf2.py", 7, "tf.estimator.SequentialHeadWrapper"): "supported",
        ("tf2.py", 7, "tf.estimator.BinaryClassHead"): "supported",
        ("tf1.py", 2, "tf.contrib.factorization.KMeansClustering"): "supported",
        ("tf1.py", 4, "tf.contrib.factorization.KMeansClustering"): "supported",
        ("tf1.py", 6, "tf.estimator.experimental.KMeans"): "supported",
    }
    assert {f["path"].rsplit("/", 1)[-1]: f["verdict"] for f in report["files"]} == {
        "tf1.py": "ok", "tf2.py": "ok",
    }  # fmt: skip
