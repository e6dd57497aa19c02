"""Feature column kinds in canned models, parsing specs, add_metrics, export signatures of
binary classifiers and regressors, and the canned estimators' bad-input errors."""

import os

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as estimator

fc = tf.feature_column


def table(n=64, seed=0):
    rng = np.random.RandomState(seed)
    return {
        "x": rng.randn(n).astype(np.float32),
        "colour": rng.choice(["red", "green", "blue"], n),
        "shape": rng.choice(["round", "square"], n),
        "city": rng.choice([f"c{i}" for i in range(20)], n),
        "id": rng.randint(0, 10, n).astype(np.int64),
        "id_weight": rng.rand(n).astype(np.float32),
    }, rng.randint(0, 2, n).astype(np.int64)


def input_fn(feats, label, repeat=True, batch=16):
    def fn():
        dataset = tf.data.Dataset.from_tensor_slices((feats, label))
        return dataset.repeat().batch(batch) if repeat else dataset.batch(batch)

    return fn


def test_every_column_kind_trains_in_dnn_and_linear_models(tmp_path):
    vocab = tmp_path / "shapes.txt"
    vocab.write_text("round\nsquare\n")
    colour = fc.categorical_column_with_vocabulary_list("colour", ["red", "green", "blue"])
    shape = fc.categorical_column_with_vocabulary_file("shape", str(vocab), 2)
    city = fc.categorical_column_with_hash_bucket("city", 8)
    ident = fc.categorical_column_with_identity("id", 10)
    weighted = fc.weighted_categorical_column(ident, "id_weight")
    buckets = fc.bucketized_column(fc.numeric_column("x"), [-1.0, 0.0, 1.0])
    crossed = fc.crossed_column([colour, buckets], 12)
    dnn_columns = [
        fc.numeric_column("x"), fc.indicator_column(shape), fc.embedding_column(weighted, 2),
        fc.indicator_column(crossed), fc.embedding_column(city, 3),
    ]  # fmt: skip
    linear_columns = [colour, shape, city, weighted, buckets, crossed]
    feats, label = table()
    est = estimator.DNNLinearCombinedClassifier(
        model_dir=str(tmp_path / "model"), linear_feature_columns=linear_columns,
        dnn_feature_columns=dnn_columns, dnn_hidden_units=[8], batch_norm=True, dnn_dropout=0.1,
    )  # fmt: skip
    est.train(input_fn(feats, label), steps=5)
    metrics = est.evaluate(input_fn(feats, label, repeat=False))
    assert np.isfinite(metrics["loss"]) and metrics["global_step"] == 5
    names = est.get_variable_names()
    for name in (
        "linear/linear_model/colour/weights",
        "linear/linear_model/id_weighted_by_id_weight/weights",
        "linear/linear_model/colour_X_x_bucketized/weights",
        "dnn/input_from_feature_columns/input_layer/id_weighted_by_id_weight_embedding/"
        "embedding_weights",
        "dnn/hiddenlayer_0/batchnorm_0/moving_mean",
        "dnn/hiddenlayer_0/batchnorm_0/gamma",
    ):
        assert name in names, name
    # Batch-norm statistics move during training (UPDATE_OPS run with the train_op).
    assert not np.allclose(est.get_variable_value("dnn/hiddenlayer_0/batchnorm_0/moving_mean"), 0)


def test_parse_example_specs_and_training_from_tf_examples(tmp_path):
    columns = [fc.numeric_column("x"), fc.categorical_column_with_vocabulary_list(
        "colour", ["red", "green", "blue"])]  # fmt: skip
    spec = estimator.classifier_parse_example_spec(columns, "label", weight_column="w")
    assert (tuple(spec["label"].shape), spec["label"].dtype) == ((1,), tf.int64)
    assert (tuple(spec["w"].shape), spec["w"].dtype) == ((1,), tf.float32)
    assert (tuple(spec["x"].shape), spec["x"].dtype) == ((1,), tf.float32)
    assert isinstance(spec["colour"], tf.io.VarLenFeature)
    regression = estimator.regressor_parse_example_spec(columns, "y", label_dimension=2)
    assert tuple(regression["y"].shape) == (2,)
    with pytest.raises(ValueError, match="label should not be used as feature"):
        estimator.classifier_parse_example_spec(columns, "x")
    with pytest.raises(ValueError, match="weight_column should not be used as feature"):
        estimator.classifier_parse_example_spec(columns, "label", weight_column="x")

    path = str(tmp_path / "data.tfrecord")
    feats, label = table(32)
    with tf.io.TFRecordWriter(path) as writer:
        for i in range(32):
            example = tf.train.Example(features=tf.train.Features(feature={
                "x": tf.train.Feature(float_list=tf.train.FloatList(value=[feats["x"][i]])),
                "colour": tf.train.Feature(bytes_list=tf.train.BytesList(
                    value=[feats["colour"][i].encode()])),
                "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[label[i]])),
                "w": tf.train.Feature(float_list=tf.train.FloatList(value=[1.0])),
            }))  # fmt: skip
            writer.write(example.SerializeToString())

    def tfrecord_input():
        dataset = tf.data.TFRecordDataset(path).batch(8)
        dataset = dataset.map(lambda s: tf.io.parse_example(s, spec))
        return dataset.map(lambda f: (f, f.pop("label")))

    est = estimator.LinearClassifier(columns, str(tmp_path / "m"), weight_column="w")
    est.train(tfrecord_input, steps=4)
    assert est.evaluate(tfrecord_input)["global_step"] == 4


def test_add_metrics_adds_and_replaces_metrics(tmp_path):
    feats, label = table()
    est = estimator.LinearClassifier([fc.numeric_column("x")], str(tmp_path))
    est.train(input_fn(feats, label), steps=3)

    def metric_fn(labels, predictions, features):
        mean_x = tf.keras.metrics.Mean()
        mean_x.update_state(features["x"])
        return {
            "mean_x": mean_x,
            "accuracy": tf.compat.v1.metrics.mean(tf.zeros_like(predictions["logistic"])),
        }

    extended = estimator.add_metrics(est, metric_fn)
    assert extended is not est and extended.model_dir == est.model_dir
    metrics = extended.evaluate(input_fn(feats, label, repeat=False))
    np.testing.assert_allclose(metrics["mean_x"], feats["x"].mean(), rtol=1e-5)
    assert metrics["accuracy"] == 0.0  # replaced by the metric_fn's
    assert "auc" in metrics and metrics["global_step"] == 3
    with pytest.raises(ValueError, match="has following not expected args: \\['foo'\\]"):
        estimator.add_metrics(est, lambda foo: {})


def test_binary_classifier_and_regressor_export_signatures(tmp_path):
    feats, label = table()
    columns = [fc.numeric_column("x")]
    receiver = estimator.export.build_parsing_serving_input_receiver_fn(
        fc.make_parse_example_spec(columns)
    )
    examples = tf.constant([
        tf.train.Example(features=tf.train.Features(feature={
            "x": tf.train.Feature(float_list=tf.train.FloatList(value=[v]))}
        )).SerializeToString() for v in (-1.0, 2.0)
    ])  # fmt: skip

    classifier = estimator.LinearClassifier(columns, str(tmp_path / "c"))
    classifier.train(input_fn(feats, label), steps=3)
    loaded = tf.saved_model.load(classifier.export_saved_model(str(tmp_path / "ce"), receiver))
    assert set(loaded.signatures) == {"serving_default", "classification", "regression", "predict"}
    logistic = loaded.signatures["regression"](inputs=examples)["outputs"].numpy()
    predicted = loaded.signatures["predict"](examples=examples)
    np.testing.assert_allclose(logistic, predicted["logistic"].numpy(), rtol=1e-6)
    assert set(predicted) == {"logits", "logistic", "probabilities", "class_ids", "classes",
                              "all_class_ids", "all_classes"}  # fmt: skip

    regressor = estimator.LinearRegressor(columns, str(tmp_path / "r"))
    regressor.train(input_fn(feats, feats["x"] * 2.0), steps=3)
    loaded = tf.saved_model.load(regressor.export_saved_model(str(tmp_path / "re"), receiver))
    assert set(loaded.signatures) == {"serving_default", "regression", "predict"}
    outputs = loaded.signatures["serving_default"](inputs=examples)["outputs"].numpy()
    np.testing.assert_allclose(
        outputs, loaded.signatures["predict"](examples=examples)["predictions"].numpy()
    )


COLUMNS = [fc.numeric_column("x")]


@pytest.mark.parametrize(
    "make, error, message",
    [
        (lambda d: estimator.DNNClassifier([4], COLUMNS, d, optimizer="Foo"), ValueError,
         "Unsupported optimizer name: Foo. Supported names are: ('Adagrad', 'Adam', 'Ftrl', "
         "'RMSProp', 'SGD')"),
        (lambda d: estimator.LinearClassifier(COLUMNS, d, n_classes=1), ValueError,
         "n_classes must be > 2: 1."),
        (lambda d: estimator.DNNClassifier([4], [], d), ValueError,
         "feature_columns must not be empty."),
        (lambda d: estimator.DNNClassifier(None, COLUMNS, d), ValueError,
         "hidden_units must be a list"),
        (lambda d: estimator.DNNLinearCombinedClassifier(d), ValueError,
         "Either linear_feature_columns or dnn_feature_columns must be defined."),
        (lambda d: estimator.DNNLinearCombinedClassifier(d, dnn_feature_columns=COLUMNS),
         ValueError, "dnn_hidden_units must be defined when dnn_feature_columns is specified."),
        (lambda d: estimator.LinearRegressor(COLUMNS, d, loss_reduction="none"), ValueError,
         "Invalid loss_reduction: none."),
        (lambda d: estimator.DNNClassifier([4], COLUMNS, d, n_classes=3,
                                           label_vocabulary=["a", "b"]), ValueError,
         '"label_vocabulary" does not have "n_classes" items.'),
        (lambda d: estimator.DNNClassifier([4], ["x"], d), ValueError,
         "Items of feature_columns must be a feature column"),
    ],
)  # fmt: skip
def test_bad_constructor_arguments(tmp_path, make, error, message):
    with pytest.raises(error) as info:
        make(str(tmp_path / "m"))
    assert message in str(info.value)
    assert not os.path.exists(tmp_path / "m")  # nothing written


def test_bad_data_errors_leave_model_dir_resumable(tmp_path):
    feats, label = table()
    model_dir = str(tmp_path)
    est = estimator.DNNClassifier([4], COLUMNS, model_dir, n_classes=3)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Labels must be <= n_classes - 1"):
        est.train(input_fn(feats, label + 2), steps=2)
    # Only the step-0 checkpoint tf.estimator also wrote before the first step: complete.
    assert est.get_variable_value("global_step") == 0
    with pytest.raises(ValueError, match="Feature y is not in features dictionary"):
        estimator.DNNClassifier([4], [fc.numeric_column("y")], model_dir).train(
            input_fn(feats, label), steps=1
        )
    vocab = estimator.LinearClassifier(COLUMNS, str(tmp_path / "vocab"),
                                       label_vocabulary=["no", "yes"])  # fmt: skip
    with pytest.raises(tf.errors.InvalidArgumentError, match="not in label_vocabulary"):
        vocab.train(input_fn(feats, np.where(label == 1, "yes", "maybe")), steps=1)
    sequence = tf.feature_column.sequence_numeric_column("x")
    with pytest.raises(ValueError, match="do not take sequence columns"):
        estimator.LinearClassifier([sequence], str(tmp_path / "seq"))
    # After all of that the model_dir trains normally.
    est.train(input_fn(feats, label), steps=2)
    assert est.get_variable_value("global_step") == 2
