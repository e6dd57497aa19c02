"""2.15's time-series, SDCA, k-means, RNN, SavedModelEstimator and key modules after
install(): every name resolves, the legacy paths hold keras_estimator's objects, and the
private pieces work (hash tables, the SDCA model, k-means' model_fn object, RNNModel);
SavedModelEstimator raises an error that says what to use instead."""

import importlib
import json
import os

import numpy as np
import pytest
import tensorflow as tf
from helpers import FIXTURES

import keras_estimator as estimator
from keras_estimator.canned.heads import base_head

ROOT = "tensorflow_estimator.python.estimator.canned"
MINE = ("timeseries", "linear_optimizer", "kmeans", "rnn", "saved_model_estimator",
        "metric_keys", "prediction_keys")  # fmt: skip


def _legacy(name):
    return importlib.import_module(f"{ROOT}.{name}")


def test_every_name_of_these_modules_resolves(installed):
    with open(os.path.join(FIXTURES, "module_tree", "tf_estimator_2_15_modules.json")) as f:
        tree = json.load(f)
    missing = {}
    for name, names in tree.items():
        if any(name.startswith(f"{ROOT}.{mine}") for mine in MINE):
            module = importlib.import_module(name)
            missing[name] = [n for n in names if not hasattr(module, n)]
    assert len(missing) == 20 and not any(missing.values()), missing
    from keras_estimator.canned import rnn, timeseries

    assert _legacy("timeseries.estimators").LSTMAutoRegressor is timeseries.LSTMAutoRegressor
    assert _legacy("timeseries.ar_model").ARModel is timeseries.ARModel
    assert _legacy("rnn").RNNClassifier is rnn.RNNClassifier
    assert _legacy("kmeans").KMeansClustering is estimator.v1.experimental.KMeans
    legacy_tf = importlib.import_module("tensorflow.python.estimator.canned.metric_keys")
    assert legacy_tf.MetricKeys is _legacy("metric_keys").MetricKeys


def test_metric_and_prediction_keys_are_the_heads_names(installed):
    keys = _legacy("metric_keys").MetricKeys
    assert (keys.LOSS, keys.LOSS_MEAN, keys.AUC_PR) == (
        "loss",
        base_head.LOSS_MEAN,
        base_head.AUC_PR,
    )
    assert keys.ACCURACY_AT_THRESHOLD % 0.5 == "accuracy/positive_threshold_0.5"
    predictions = _legacy("prediction_keys").PredictionKeys
    assert predictions.PROBABILITIES == base_head.PROBABILITIES
    assert predictions.TOP_K == "top_k"


def test_sharded_hash_table_with_vector_keys(installed):
    tables = _legacy("linear_optimizer.python.utils.sharded_mutable_dense_hashtable")
    table = tables._ShardedMutableDenseHashTable(
        tf.int64, tf.float32, default_value=[0.0, 0.0], empty_key=[0, 0], deleted_key=[-1, -1],
        num_shards=2,
    )  # fmt: skip
    assert [t.name for t in table.table_shards] == [
        "ShardedMutableHashTable-1-of-2", "ShardedMutableHashTable-2-of-2"]  # fmt: skip
    keys = tf.constant([[3, 1], [4, 1], [5, 9]], tf.int64)
    table.insert(keys, tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]))
    assert int(table.size()) == 3
    found = table.lookup(tf.constant([[5, 9], [7, 7], [3, 1]], tf.int64))
    np.testing.assert_array_equal(found, [[5.0, 6.0], [0.0, 0.0], [1.0, 2.0]])
    shard_keys, shard_values = table.export_sharded()
    assert len(shard_keys) == 2 and sum(float(tf.reduce_sum(v)) for v in shard_values) == 21.0
    with pytest.raises(ValueError, match="vector or matrix"):
        table.lookup(tf.zeros([1, 1, 2], tf.int64))


def _sdca_examples():
    rng = np.random.RandomState(0)
    x = rng.randn(64, 2).astype(np.float32)
    ids = rng.randint(0, 4, size=64)
    labels = ((x[:, 0] + (ids == 2)) > 0.3).astype(np.float32)
    column = _legacy("linear_optimizer.python.utils.sdca_ops")._SparseFeatureColumn(
        np.arange(64), ids, None
    )
    return {
        "sparse_features": [column], "dense_features": [tf.constant(x)],
        "example_labels": tf.constant(labels), "example_weights": tf.ones([64]),
        "example_ids": tf.constant([str(i) for i in range(64)]),
    }  # fmt: skip


def test_sdca_model_trains_a_logistic_regression(installed):
    sdca_ops = _legacy("linear_optimizer.python.utils.sdca_ops")
    examples = _sdca_examples()
    variables = {
        "sparse_features_weights": [tf.Variable(tf.zeros([4, 1]), name="ids_weights")],
        "dense_features_weights": [tf.Variable(tf.zeros([2, 1]), name="x_weights")],
    }
    options = {"symmetric_l1_regularization": 0.0, "symmetric_l2_regularization": 1.0,
               "loss_type": "logistic_loss"}  # fmt: skip
    model = sdca_ops._SDCAModel(examples, variables, options)
    step = tf.Variable(0, dtype=tf.int64)
    before = float(model.unregularized_loss(examples))
    assert before == pytest.approx(np.log(2.0))
    for _ in range(10):
        model.update_weights(model.minimize(global_step=step))
    after = float(model.unregularized_loss(examples))
    assert int(step.numpy()) == 10 and after < 0.5 * before
    assert float(model.regularized_loss(examples)) > after
    gap = float(model.approximate_duality_gap())
    assert abs(gap) < 0.1  # primal and dual nearly meet (it may dip just below 0)
    accuracy = np.mean(
        (model.predictions(examples).numpy() > 0.5) == examples["example_labels"].numpy()
    )
    assert accuracy > 0.9
    with pytest.raises(ValueError, match="symmetric_l2_regularization should be positive"):
        sdca_ops._SDCAModel(examples, variables, {**options, "symmetric_l2_regularization": 0.0})
    with pytest.raises(ValueError, match="Unsupported loss_type"):
        sdca_ops._SDCAModel(examples, variables, {**options, "loss_type": "absolute"})


def test_kmeans_model_fn_object_clusters_two_blobs(installed, tmp_path):
    kmeans = _legacy("kmeans")
    rng = np.random.RandomState(0)
    points = np.concatenate([rng.randn(50, 2) * 0.1, rng.randn(50, 2) * 0.1 + 5]).astype(np.float32)
    model_fn = kmeans._ModelFn(
        num_clusters=2, initial_clusters="kmeans_plus_plus", distance_metric="squared_euclidean",
        seed=1, use_mini_batch=False, mini_batch_steps_per_iteration=1,
        kmeans_plus_plus_num_retries=2, relative_tolerance=None, feature_columns=None,
    ).model_fn  # fmt: skip
    est = estimator.Estimator(model_fn, model_dir=str(tmp_path))
    est.train(lambda: tf.data.Dataset.from_tensors({"x": points}).repeat(), steps=5)
    centers = sorted(est.get_variable_value("clusters").tolist())
    np.testing.assert_allclose(centers, [[0.0, 0.0], [5.0, 5.0]], atol=0.1)
    parsed = kmeans._parse_features_if_necessary({"b": points[:, 1:], "a": points[:, :1]}, None)
    np.testing.assert_array_equal(parsed, points)


def test_rnn_model_is_a_keras_model_over_sequence_columns(installed):
    rnn = _legacy("rnn")
    import keras

    column = tf.feature_column.sequence_numeric_column("x")
    cells = rnn._make_rnn_cell_fn([4, 3], "gru")()
    assert [type(c).__name__ for c in cells] == ["GRUCell", "GRUCell"]
    model = rnn.RNNModel(rnn._make_rnn_layer(None, 6, "lstm", False), 1, [column])
    rng = np.random.RandomState(0)
    x = rng.rand(32, 5).astype(np.float32)
    features = {"x": tf.sparse.from_dense(x)}
    logits = model(features)
    assert logits.shape == (32, 1)
    model.compile(keras.optimizers.Adam(0.05), "mse")
    history = model.fit(features, x.sum(1, keepdims=True), epochs=30, batch_size=32, verbose=0)
    assert history.history["loss"][-1] < 0.5 * history.history["loss"][0]
    assert rnn.RNNModel.from_config(model.get_config()).get_config()["units"] == 1
    with pytest.raises(ValueError, match="units and cell_type must not be specified"):
        rnn._verify_rnn_cell_input(lambda: None, [3], rnn.USE_DEFAULT)


def test_saved_model_estimator_raises_and_its_helpers_work(installed, tmp_path):
    module = _legacy("saved_model_estimator")
    with pytest.raises(NotImplementedError, match="tf.saved_model.load"):
        module.SavedModelEstimator(str(tmp_path))
    with pytest.raises(ValueError, match="invalid SavedModel format"):
        module._get_saved_model_ckpt(str(tmp_path))
    outputs = {"loss": 1, "metrics/auc/value": 2, "metrics/auc/update_op": 3,
               "metrics/x/value": 4, "predictions/p": 5}  # fmt: skip
    assert module._extract_eval_metrics(outputs) == {"metrics/auc": (2, 3)}
    loss, predictions, _ = module._validate_and_extract_outputs(
        "eval", outputs, "tensorflow/supervised/eval"
    )
    assert loss == 1 and predictions == {"predictions/p": 5}
    with pytest.raises(RuntimeError, match="experimental_export_all_saved_models"):
        module._validate_and_extract_outputs("train", outputs, "tensorflow/serving/predict")
    with tf.Graph().as_default():
        placeholder = tf.compat.v1.placeholder(tf.float32, [None, 3], name="x")
        info = tf.compat.v1.saved_model.utils.build_tensor_info(placeholder)
        with pytest.raises(ValueError, match="Expected dtype: <dtype: 'float32'>"):
            module._check_same_dtype_and_shape(tf.zeros([2, 3], tf.int32), info, "x")
