"""Heads against hand computations and tf.estimator 2.15's own numbers (FACTS.md section 6).

Losses eagerly (`head.loss`), eval metrics of an eager EVAL spec, predictions, specs trained and
evaluated through the Estimator with a custom model_fn, and the errors bad input raises.
"""

import functools

import keras
import numpy as np
import pytest
import tensorflow as tf
from helpers import dataset_input_fn

import keras_estimator as estimator

SOBS, SUM = "sum_over_batch_size", "sum"
W = np.array([1.0, 2.0, 0.5], np.float32)
BIN_LOGITS = np.array([[-1.0], [0.5], [2.0]], np.float32)
BIN_LABELS = np.array([[0], [1], [1]], np.int64)
MC_LOGITS = np.array([[1.0, 0.0, -1.0], [0.0, 2.0, 0.0], [0.5, 0.5, 3.0]], np.float32)
MC_LABELS = np.array([0, 2, 2], np.int64)
REG_LOGITS = np.array([[1.0], [2.0], [3.0]], np.float32)
REG_LABELS = np.array([[0.0], [2.5], [5.0]], np.float32)


def sigmoid_ce(logits, labels):
    x, y = np.asarray(logits, np.float64), np.asarray(labels, np.float64)
    return np.maximum(x, 0) - x * y + np.log1p(np.exp(-np.abs(x)))


def softmax_ce(logits, labels):
    x = np.asarray(logits, np.float64)
    log_z = np.log(np.sum(np.exp(x - x.max(1, keepdims=True)), 1)) + x.max(1)
    return log_z - x[np.arange(len(x)), np.asarray(labels).reshape(-1)]


def poisson_full(logits, labels):
    x, y = np.asarray(logits, np.float64), np.asarray(labels, np.float64)
    safe = np.where(y > 1, y, 2.0)
    stirling = safe * np.log(safe) - safe + 0.5 * np.log(2 * np.pi * safe)
    return np.exp(x) - y * x + np.where(y > 1, stirling, 0.0)


def reduce(per_example, weights, reduction):
    """tf.estimator 2.15: SUM is sum(w*l); SUM_OVER_BATCH_SIZE divides it by the element count."""
    per_example = np.asarray(per_example, np.float64)
    weighted = per_example * np.reshape(weights, (-1,) + (1,) * (per_example.ndim - 1))
    return weighted.sum() / (1 if reduction == SUM else weighted.size)


# kind: (head factory, logits, labels, [SOBS, SOBS weighted, SUM, SUM weighted], average_loss)
TF215 = {
    "binary": (estimator.BinaryClassHead, BIN_LOGITS, BIN_LABELS,
               [0.304756, 0.441627, 0.914267, 1.32488], 0.378537),
    "multi_class": (functools.partial(estimator.MultiClassHead, 3), MC_LOGITS, MC_LABELS,
                    [0.933053, 1.654233, 2.799159, 4.9627], 1.417914),
    "regression": (estimator.RegressionHead, REG_LOGITS, REG_LABELS,
                   [1.75, 1.16667, 5.25, 3.5], 1.0),
}  # fmt: skip
REDUCTIONS = [(SOBS, False, 0), (SOBS, True, 1), (SUM, False, 2), (SUM, True, 3)]


@pytest.mark.parametrize("reduction, weighted, index", REDUCTIONS)
@pytest.mark.parametrize("kind", sorted(TF215))
def test_loss_matches_tf_estimator(kind, reduction, weighted, index):
    make, logits, labels, expected, _ = TF215[kind]
    head = make(weight_column="w" if weighted else None, loss_reduction=reduction)
    features = {"w": W} if weighted else {}
    for mode in (estimator.ModeKeys.TRAIN, estimator.ModeKeys.EVAL):
        loss = head.loss(labels, logits, features=features, mode=mode)
        assert float(loss) == pytest.approx(expected[index], rel=1e-5)


@pytest.mark.parametrize("reduction", [SOBS, SUM])
@pytest.mark.parametrize("kind", sorted(TF215))
def test_eval_spec_average_loss_is_weighted_mean(kind, reduction):
    make, logits, labels, expected, average_loss = TF215[kind]
    head = make(weight_column="w", loss_reduction=reduction)
    spec = head.create_estimator_spec({"w": W}, estimator.ModeKeys.EVAL, logits, labels)
    assert float(spec.loss) == pytest.approx(expected[1 if reduction == SOBS else 3], rel=1e-5)
    assert float(spec.eval_metric_ops["average_loss"].result()) == pytest.approx(
        average_loss, rel=1e-5
    )


def test_per_example_losses_match_tf_estimator():
    np.testing.assert_allclose(sigmoid_ce(BIN_LOGITS, BIN_LABELS)[:, 0],
                               [0.31326, 0.47408, 0.12693], atol=1e-5)  # fmt: skip
    np.testing.assert_allclose(softmax_ce(MC_LOGITS, MC_LABELS), [0.40761, 2.23954, 0.15201],
                               atol=1e-5)  # fmt: skip


def test_binary_soft_labels_use_float_cross_entropy():
    # tf.estimator 2.15 casts binary labels to float32 and checks they lie in [0, 1].
    labels = np.array([[0.25], [0.75], [1.0]], np.float32)
    loss = estimator.BinaryClassHead().loss(labels, BIN_LOGITS)
    assert float(loss) == pytest.approx(reduce(sigmoid_ce(BIN_LOGITS, labels), 1.0, SOBS),
                                        rel=1e-5)  # fmt: skip


@pytest.mark.parametrize("reduction", [SOBS, SUM])
def test_regression_label_dimension_two(reduction):
    logits = np.array([[1.0, 0.0], [0.0, 2.0]], np.float32)  # squared errors [[1, 0], [0, 4]]
    labels = np.zeros((2, 2), np.float32)
    head = estimator.RegressionHead(label_dimension=2, weight_column="w", loss_reduction=reduction)
    unweighted = estimator.RegressionHead(label_dimension=2, loss_reduction=reduction)
    assert float(unweighted.loss(labels, logits)) == (1.25 if reduction == SOBS else 5.0)
    weights = np.array([1.0, 2.0], np.float32)
    expected = reduce([[1.0, 0.0], [0.0, 4.0]], weights, reduction)  # SOBS: 9 / 4
    assert float(head.loss(labels, logits, {"w": weights})) == pytest.approx(expected, rel=1e-6)


@pytest.mark.parametrize("reduction, weighted", [(r, w) for r, w, _ in REDUCTIONS])
def test_poisson_logistic_multilabel_losses(reduction, weighted):
    weights = W if weighted else np.ones(3)
    kwargs = {"weight_column": "w" if weighted else None, "loss_reduction": reduction}
    features = {"w": W} if weighted else {}
    counts = np.array([[0.0], [1.0], [4.0]], np.float32)
    logits = np.array([[0.3], [-0.5], [1.2]], np.float32)
    poisson = estimator.PoissonRegressionHead(**kwargs).loss(counts, logits, features)
    expected = reduce(poisson_full(logits, counts), weights, reduction)
    assert float(poisson) == pytest.approx(expected, rel=1e-5)

    targets = np.array([[0.0], [0.3], [1.0]], np.float32)
    logistic = estimator.LogisticRegressionHead(**kwargs).loss(targets, BIN_LOGITS, features)
    expected = reduce(sigmoid_ce(BIN_LOGITS, targets), weights, reduction)
    assert float(logistic) == pytest.approx(expected, rel=1e-5)

    multi_hot = np.array([[0, 1, 1], [1, 0, 0], [1, 1, 0]], np.int64)
    multilabel = estimator.MultiLabelHead(3, **kwargs).loss(multi_hot, MC_LOGITS, features)
    per_example = sigmoid_ce(MC_LOGITS, multi_hot).mean(axis=1)  # averaged over classes
    assert float(multilabel) == pytest.approx(reduce(per_example, weights, reduction), rel=1e-5)


def test_multi_head_loss_is_weighted_sum_of_head_losses():
    head = estimator.MultiHead(
        [estimator.BinaryClassHead(name="h1"), estimator.RegressionHead(name="h2")],
        head_weights=[1.0, 2.0],
    )
    assert head.name == "h1_h2" and head.logits_dimension == 2
    labels = {"h1": BIN_LABELS, "h2": REG_LABELS}
    expected = 0.304756 * 1.0 + 1.75 * 2.0
    as_dict = head.loss(labels, {"h1": BIN_LOGITS, "h2": REG_LOGITS})
    concatenated = head.loss(labels, np.concatenate([BIN_LOGITS, REG_LOGITS], axis=1))
    assert float(as_dict) == pytest.approx(expected, rel=1e-5)
    assert float(concatenated) == pytest.approx(expected, rel=1e-5)


def _kinds(predictions):
    return {k: (tuple(v.shape), v.dtype) for k, v in predictions.items()}


def test_binary_predictions():
    head = estimator.BinaryClassHead()
    preds = head.predictions(BIN_LOGITS)
    assert _kinds(preds) == {
        "logits": ((3, 1), tf.float32), "logistic": ((3, 1), tf.float32),
        "probabilities": ((3, 2), tf.float32), "class_ids": ((3, 1), tf.int64),
        "classes": ((3, 1), tf.string), "all_class_ids": ((3, 2), tf.int32),
        "all_classes": ((3, 2), tf.string),
    }  # fmt: skip
    logistic = 1 / (1 + np.exp(-BIN_LOGITS))
    np.testing.assert_allclose(preds["logistic"], logistic, rtol=1e-6)
    np.testing.assert_allclose(preds["probabilities"], np.hstack([1 - logistic, logistic]),
                               rtol=1e-6)  # fmt: skip
    np.testing.assert_array_equal(preds["class_ids"], [[0], [1], [1]])
    np.testing.assert_array_equal(preds["classes"], [[b"0"], [b"1"], [b"1"]])
    np.testing.assert_array_equal(preds["all_class_ids"], [[0, 1]] * 3)
    np.testing.assert_array_equal(preds["all_classes"], [[b"0", b"1"]] * 3)
    vocab = estimator.BinaryClassHead(label_vocabulary=["neg", "pos"]).predictions(BIN_LOGITS)
    np.testing.assert_array_equal(vocab["classes"], [[b"neg"], [b"pos"], [b"pos"]])
    np.testing.assert_array_equal(vocab["all_classes"], [[b"neg", b"pos"]] * 3)


def test_multi_class_and_regression_predictions():
    preds = estimator.MultiClassHead(3).predictions(MC_LOGITS)
    assert _kinds(preds) == {
        "logits": ((3, 3), tf.float32), "probabilities": ((3, 3), tf.float32),
        "class_ids": ((3, 1), tf.int64), "classes": ((3, 1), tf.string),
        "all_class_ids": ((3, 3), tf.int32), "all_classes": ((3, 3), tf.string),
    }  # fmt: skip
    softmax = np.exp(MC_LOGITS) / np.exp(MC_LOGITS).sum(1, keepdims=True)
    np.testing.assert_allclose(preds["probabilities"], softmax, rtol=1e-5)
    np.testing.assert_array_equal(preds["class_ids"], [[0], [1], [2]])
    np.testing.assert_array_equal(preds["classes"], [[b"0"], [b"1"], [b"2"]])
    np.testing.assert_array_equal(preds["all_class_ids"], [[0, 1, 2]] * 3)
    vocab = estimator.MultiClassHead(3, label_vocabulary=["a", "b", "c"]).predictions(MC_LOGITS)
    np.testing.assert_array_equal(vocab["classes"], [[b"a"], [b"b"], [b"c"]])
    np.testing.assert_array_equal(vocab["all_classes"], [[b"a", b"b", b"c"]] * 3)

    assert set(estimator.RegressionHead().predictions(REG_LOGITS)) == {"predictions"}
    poisson = estimator.PoissonRegressionHead().predictions(REG_LOGITS)
    logistic = estimator.LogisticRegressionHead().predictions(BIN_LOGITS)
    assert set(poisson) == set(logistic) == {"predictions", "logits"}
    np.testing.assert_allclose(poisson["predictions"], np.exp(REG_LOGITS), rtol=1e-6)
    np.testing.assert_allclose(logistic["predictions"], 1 / (1 + np.exp(-BIN_LOGITS)), rtol=1e-6)


# -- through the Estimator -------------------------------------------------------------


def _input_fn(features, labels=None, batch_size=64, repeat=False):
    def input_fn():
        data = (features, labels) if labels is not None else features
        ds = tf.data.Dataset.from_tensor_slices(data)
        return (ds.repeat() if repeat else ds).batch(batch_size)

    return input_fn


def _head_model_fn(head, **train_kwargs):
    def model_fn(features, labels, mode):
        logits = tf.compat.v1.layers.dense(features["x"], head.logits_dimension)
        return head.create_estimator_spec(features, mode, logits, labels, **train_kwargs)

    return model_fn


def _data(n=48, seed=0):
    rng = np.random.RandomState(seed)
    x = rng.randn(n, 4).astype(np.float32)
    w = rng.uniform(0.5, 2.0, n).astype(np.float32)
    return x, w


def _trained_logits(head, train_kwargs, features, labels, tmp_path, key="logits"):
    est = estimator.Estimator(_head_model_fn(head, **train_kwargs), model_dir=str(tmp_path))
    est.train(_input_fn(features, labels, 16, repeat=True), steps=5)
    result = est.evaluate(_input_fn(features, labels, len(labels)))  # one batch
    preds = est.predict(_input_fn(features, batch_size=len(labels)), predict_keys=[key])
    return result, np.array([p[key] for p in preds])


def test_binary_head_through_estimator_adagrad(tmp_path):
    x, w = _data()
    y = (x[:, 0] + 0.3 * x[:, 1] > 0).astype(np.int64)
    head = estimator.BinaryClassHead(weight_column="w")
    result, logits = _trained_logits(head, {"optimizer": "Adagrad"}, {"x": x, "w": w}, y,
                                     tmp_path)  # fmt: skip
    assert set(result) == {
        "accuracy", "accuracy_baseline", "auc", "auc_precision_recall", "average_loss",
        "label/mean", "precision", "prediction/mean", "recall", "loss", "global_step",
    }  # fmt: skip
    assert result["global_step"] == 5
    per_example = sigmoid_ce(logits[:, 0], y)
    assert result["average_loss"] == pytest.approx(np.sum(w * per_example) / np.sum(w), rel=1e-5)
    assert result["loss"] == pytest.approx(np.sum(w * per_example) / len(y), rel=1e-5)
    accuracy = np.sum(w * ((logits[:, 0] > 0) == y)) / np.sum(w)
    assert result["accuracy"] == pytest.approx(accuracy, rel=1e-5)
    assert result["label/mean"] == pytest.approx(np.sum(w * y) / np.sum(w), rel=1e-5)


def test_multi_class_head_through_estimator_keras_adam(tmp_path):
    x, w = _data(seed=1)
    y = np.argmax(x[:, :3], axis=1).astype(np.int64)
    head = estimator.MultiClassHead(3, weight_column="w")
    train_kwargs = {"optimizer": keras.optimizers.Adam(0.01)}
    result, logits = _trained_logits(head, train_kwargs, {"x": x, "w": w}, y, tmp_path)
    assert set(result) == {"accuracy", "average_loss", "loss", "global_step"}
    assert result["global_step"] == 5
    per_example = softmax_ce(logits, y)
    assert result["average_loss"] == pytest.approx(np.sum(w * per_example) / np.sum(w), rel=1e-5)
    accuracy = np.sum(w * (np.argmax(logits, 1) == y)) / np.sum(w)
    assert result["accuracy"] == pytest.approx(accuracy, rel=1e-5)


def test_regression_head_through_estimator_train_op_fn(tmp_path):
    x, w = _data(seed=2)
    y = (x @ np.array([1.0, -2.0, 0.5, 0.0], np.float32))[:, None]

    def train_op_fn(loss):
        return tf.compat.v1.train.GradientDescentOptimizer(0.05).minimize(
            loss, global_step=tf.compat.v1.train.get_global_step()
        )

    head = estimator.RegressionHead(weight_column="w")
    train_kwargs = {"train_op_fn": train_op_fn}
    features = {"x": x, "w": w}
    result, logits = _trained_logits(head, train_kwargs, features, y, tmp_path, "predictions")
    assert set(result) == {"average_loss", "label/mean", "prediction/mean", "loss", "global_step"}
    assert result["global_step"] == 5
    per_example = (logits - y)[:, 0] ** 2
    assert result["average_loss"] == pytest.approx(np.sum(w * per_example) / np.sum(w), rel=1e-5)
    assert result["loss"] == pytest.approx(np.sum(w * per_example) / len(y), rel=1e-5)
    mean = np.sum(w * logits[:, 0]) / np.sum(w)
    assert result["prediction/mean"] == pytest.approx(mean, rel=1e-5, abs=1e-6)


# -- bad input -------------------------------------------------------------------------


def test_label_out_of_range_fails_at_train(tmp_path):
    x, _ = _data(n=8)
    y = np.array([0, 1, 2, 3, 0, 1, 2, 0], np.int64)  # 3 is not a class of 3
    est = estimator.Estimator(
        _head_model_fn(estimator.MultiClassHead(3), optimizer="Adagrad"), model_dir=str(tmp_path)
    )
    with pytest.raises(tf.errors.InvalidArgumentError, match="Labels must be <= n_classes - 1"):
        est.train(dataset_input_fn(x, y, batch_size=8), steps=1)


def test_bad_labels_and_arguments():
    # In a graph, as under the Estimator (tf.estimator 2.15 raised ValueError when eager).
    def graph_loss(head, labels, logits):
        return tf.function(lambda: head.loss(tf.constant(labels), tf.constant(logits)))()

    with pytest.raises(tf.errors.InvalidArgumentError, match="Labels must be <= n_classes - 1"):
        graph_loss(estimator.BinaryClassHead(), np.array([[0], [2], [1]]), BIN_LOGITS)
    vocab_head = estimator.MultiClassHead(3, label_vocabulary=["a", "b", "c"])
    loss = graph_loss(vocab_head, np.array([["a"], ["c"], ["c"]]), MC_LOGITS)
    assert float(loss) == pytest.approx(0.933053, rel=1e-5)
    with pytest.raises(tf.errors.InvalidArgumentError):
        graph_loss(vocab_head, np.array([["a"], ["z"], ["c"]]), MC_LOGITS)
    with pytest.raises(ValueError, match="n_classes must be > 2"):
        estimator.MultiClassHead(n_classes=2)
    with pytest.raises(ValueError, match="Mismatched label shape"):
        estimator.MultiClassHead(3).loss(np.zeros((3, 2), np.int64), MC_LOGITS)
    with pytest.raises(ValueError, match="Mismatched label shape"):
        estimator.RegressionHead(label_dimension=2).loss(np.zeros((3, 3)), np.zeros((3, 2)))
    with pytest.raises(ValueError, match="Invalid loss_reduction"):
        estimator.BinaryClassHead(loss_reduction="none")
    with pytest.raises(ValueError, match="Feature w is not in features dictionary"):
        estimator.RegressionHead(weight_column="w").loss(REG_LABELS, REG_LOGITS, {"x": W})


# -- where the heads differ from tf.estimator 2.15 (see base_head.py there) -----------------


def test_loss_fn_receives_features_when_it_declares_them():
    # tf.estimator 2.15's call_loss_fn passes features= to a loss_fn whose arguments name it.
    def loss_fn(labels, logits, features):
        return features["scale"] * tf.square(logits - labels)

    head = estimator.RegressionHead(loss_fn=loss_fn)
    scale = np.array([[1.0], [2.0], [3.0]], np.float32)
    loss = head.loss(REG_LABELS, REG_LOGITS, {"scale": scale})
    assert float(loss) == pytest.approx((1.0 + 2 * 0.25 + 3 * 4.0) / 3, rel=1e-6)


def test_weights_of_the_wrong_shape_are_rejected():
    # get_weights_and_check_match_logits: [batch, 2] weights for [batch, 1] logits fail.
    head = estimator.BinaryClassHead(weight_column="w")
    with pytest.raises(ValueError, match="weights shape must be"):
        head.loss(BIN_LABELS, BIN_LOGITS, {"w": np.ones((3, 2), np.float32)})


def test_multi_class_float_labels_are_rejected():
    with pytest.raises(ValueError, match="Labels dtype should be integer"):
        estimator.MultiClassHead(3).loss(np.array([0.0, 2.7, 2.0], np.float32), MC_LOGITS)


def test_multi_label_head_checks_its_labels_and_reports_class_metrics(tmp_path):
    head = estimator.MultiLabelHead(3, classes_for_class_based_metrics=[0, 2])
    logits = tf.constant([[1.0, -1.0, 0.5], [0.2, 0.3, -2.0]])
    with pytest.raises(tf.errors.InvalidArgumentError, match="integer indicator Tensor"):
        tf.function(lambda: head.loss(tf.constant([[0, 2, 1], [1, 0, 0]]), logits))()
    sparse_bad = tf.SparseTensor([[0, 0], [1, 0]], tf.constant([1, 5], tf.int64), [2, 1])
    with pytest.raises(tf.errors.InvalidArgumentError, match="values in \\[0, 3\\)"):
        tf.function(lambda: head.loss(sparse_bad, logits))()
    vocab = estimator.MultiLabelHead(3, label_vocabulary=["a", "b", "c"])
    sparse_words = tf.SparseTensor([[0, 0], [1, 0]], tf.constant(["a", "z"]), [2, 1])
    with pytest.raises(tf.errors.InvalidArgumentError, match="label_vocabulary"):
        tf.function(lambda: vocab.loss(sparse_words, logits))()
    with pytest.raises(ValueError, match="classes_for_class_based_metrics"):
        estimator.MultiLabelHead(3, classes_for_class_based_metrics=[3])

    x, _ = _data()
    labels = (x[:, :3] > 0).astype(np.int64)
    result, _ = _trained_logits(head, {"optimizer": "Adagrad"}, {"x": x}, labels, tmp_path,
                                key="probabilities")  # fmt: skip
    for key in ("auc/class0", "auc_precision_recall/class2", "probability_mean/class0"):
        assert 0.0 <= result[key] <= 1.0, key
    assert "auc/class1" not in result


def test_sparse_labels_are_refused_by_single_label_heads():
    sparse = tf.SparseTensor([[0, 0]], tf.constant([1], tf.int64), [1, 1])
    for head in (estimator.BinaryClassHead(), estimator.MultiClassHead(3),
                 estimator.RegressionHead()):  # fmt: skip
        logits = tf.zeros([1, head.logits_dimension])
        with pytest.raises(ValueError, match="SparseTensor labels are not supported"):
            head.loss(sparse, logits)


def test_a_heads_metrics_in_a_tf1_graph_of_ones_own_are_in_no_collection(tmp_path):
    # tf.keras 2 made metric variables in no collection: a library's own TF1 graph
    # (AdaNet's bookkeeping) restores its model with Saver(), which must not ask the
    # checkpoint for them; it initializes them itself.
    with tf.Graph().as_default():
        w = tf.compat.v1.get_variable("w", [], initializer=tf.compat.v1.ones_initializer())
        logits = tf.reshape(w * tf.constant([1.0, 2.0]), [2, 1])
        head = estimator.MultiHead([estimator.RegressionHead(name="a"),
                                    estimator.RegressionHead(name="b")])  # fmt: skip
        labels = {"a": tf.constant([[1.0], [3.0]]), "b": tf.constant([[1.0], [2.0]])}
        spec = head.create_estimator_spec({}, "eval", {"a": logits, "b": logits}, labels)
        assert [v.name for v in tf.compat.v1.global_variables()] == ["w:0"]
        assert spec.eval_metric_ops["average_loss/a"].variables  # made, in no collection
        saver = tf.compat.v1.train.Saver()
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            path = saver.save(session, str(tmp_path / "model.ckpt"))
            saver.restore(session, path)
    assert [name for name, _ in tf.train.list_variables(path)] == ["w"]
