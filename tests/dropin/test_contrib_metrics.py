"""tf.contrib.metrics after install(): streaming metrics against tf.compat.v1.metrics and
numpy, accumulated over batches as an evaluation does."""

import numpy as np
import pytest
import tensorflow as tf

from keras_estimator.dropin.contrib import metrics

v1 = tf.compat.v1
RNG = np.random.default_rng(0)

TWINS = [  # contrib name, tf.compat.v1.metrics name, extra arguments
    ("streaming_accuracy", "accuracy", {}),
    ("streaming_precision", "precision", {}),
    ("streaming_recall", "recall", {}),
    ("streaming_auc", "auc", {}),
    ("streaming_mean_absolute_error", "mean_absolute_error", {}),
    ("streaming_mean_squared_error", "mean_squared_error", {}),
    ("streaming_root_mean_squared_error", "root_mean_squared_error", {}),
    (
        "streaming_mean_relative_error",
        "mean_relative_error",
        {"normalizer": np.full((8, 1), 2.0, "float32")},
    ),
    ("streaming_mean_cosine_distance", "mean_cosine_distance", {"dim": 1}),
    ("streaming_mean_iou", "mean_iou", {"num_classes": 2}),
    ("streaming_true_positives", "true_positives", {}),
    ("streaming_true_negatives", "true_negatives", {}),
    ("streaming_false_positives", "false_positives", {}),
    ("streaming_false_negatives", "false_negatives", {}),
    ("streaming_precision_at_thresholds", "precision_at_thresholds", {"thresholds": [0.5]}),
    ("streaming_recall_at_thresholds", "recall_at_thresholds", {"thresholds": [0.5]}),
]


def _streamed(make, batches):
    """The metric's value after running its update op on each batch, in one session."""
    with tf.Graph().as_default():
        placeholders = [v1.placeholder(tf.float32, b.shape) for b in batches[0]]
        value, update = make(*placeholders)
        with v1.Session() as session:
            session.run(v1.local_variables_initializer())
            for batch in batches:
                session.run(update, dict(zip(placeholders, batch)))
            return session.run(value)


@pytest.mark.parametrize(("name", "twin", "kwargs"), TWINS, ids=[t[0] for t in TWINS])
def test_streaming_metrics_equal_their_v1_twins_with_predictions_first(name, twin, kwargs):
    labels = [RNG.integers(0, 2, size=(8, 1)).astype("float32") for _ in range(3)]
    predictions = [RNG.uniform(size=(8, 1)).astype("float32").round() for _ in range(3)]
    batches = list(zip(predictions, labels))
    ours = _streamed(lambda p, lab: getattr(metrics, name)(p, lab, **kwargs), batches)
    theirs = _streamed(lambda p, lab: getattr(v1.metrics, twin)(lab, p, **kwargs), batches)
    np.testing.assert_allclose(ours, theirs, rtol=1e-6)


def test_streaming_mean_and_tensor_and_aggregation():
    batches = [(np.array([1.0, 2.0], "float32"),), (np.array([6.0, 7.0], "float32"),)]
    assert _streamed(metrics.streaming_mean, batches) == pytest.approx(4.0)
    np.testing.assert_allclose(_streamed(metrics.streaming_mean_tensor, batches), [3.5, 4.5])
    assert metrics.streaming_sparse_precision_at_k.__wrapped__ is v1.metrics.precision_at_k
    assert metrics.streaming_sparse_recall_at_k.__wrapped__ is v1.metrics.recall_at_k
    with tf.Graph().as_default():
        pairs = {"a": (tf.constant(1), tf.constant(2)), "b": (tf.constant(3), tf.constant(4))}
        values, updates = metrics.aggregate_metric_map(pairs)
        assert values == {"a": pairs["a"][0], "b": pairs["b"][0]}
        assert updates == {"a": pairs["a"][1], "b": pairs["b"][1]}
        assert metrics.aggregate_metrics(pairs["a"], pairs["b"]) == (
            [pairs["a"][0], pairs["b"][0]], [pairs["a"][1], pairs["b"][1]])  # fmt: skip


@pytest.mark.parametrize("weighted", [False, True])
def test_streaming_pearson_and_covariance_over_batches(weighted):
    x = RNG.normal(size=(3, 10)).astype("float32")
    y = (0.7 * x + RNG.normal(scale=0.5, size=(3, 10))).astype("float32")
    w = RNG.integers(1, 4, size=(3, 10)).astype("float32")

    def pearson(p, lab, *weights):
        return metrics.streaming_pearson_correlation(p, lab, *weights)

    def covariance(p, lab, *weights):
        return metrics.streaming_covariance(p, lab, *weights)

    batches = [(x[i], y[i], w[i]) if weighted else (x[i], y[i]) for i in range(3)]
    r = _streamed(pearson, batches)
    cov = _streamed(covariance, batches)
    if weighted:  # a weight of k counts the pair k times
        xs, ys = (
            np.repeat(x.ravel(), w.ravel().astype(int)),
            np.repeat(y.ravel(), w.ravel().astype(int)),
        )
    else:
        xs, ys = x.ravel(), y.ravel()
    np.testing.assert_allclose(r, np.corrcoef(xs, ys)[0, 1], rtol=1e-4)
    np.testing.assert_allclose(cov, np.cov(xs, ys)[0, 1], rtol=1e-4)  # unbiased (n - 1)


def test_covariance_is_nan_until_two_values_and_names_its_variables():
    batches = [(np.array([1.0], "float32"), np.array([2.0], "float32"))]
    assert np.isnan(_streamed(metrics.streaming_covariance, batches))
    with tf.Graph().as_default():
        metrics.streaming_pearson_correlation(tf.constant([1.0, 2.0]), tf.constant([1.0, 3.0]),
                                              updates_collections=["updates"])  # fmt: skip
        names = [v.op.name for v in v1.local_variables()]
        assert "pearson_r/covariance/comoment" in names
        assert "pearson_r/variance_labels/count" in names
        assert len(v1.get_collection("updates")) == 1
        assert set(v1.get_collection(v1.GraphKeys.METRIC_VARIABLES)) == set(v1.local_variables())
