"""The two census programs of the classic Cloud ML samples, on real CSV files: a custom
model_fn over vocabulary columns exported by a FinalExporter through train_and_evaluate,
and a canned wide-and-deep classifier with crossed columns and a label vocabulary. Both
SavedModels must serve, with plain TensorFlow, what predict() gives.
"""

import glob
import os

import numpy as np
import tensorflow as tf2
import tensorflow.compat.v1 as tf

import keras_estimator as estimator
from keras_estimator import export

fc = tf2.feature_column
CSV_COLUMNS = ["age", "workclass", "education", "occupation", "hours_per_week", "income"]
DEFAULTS = [[0.0], [""], [""], [""], [0.0], [""]]
LABELS = [" <=50K", " >50K"]
EDUCATION = ["Bachelors", "HS-grad", "Masters", "Doctorate", "Some-college"]
WORKCLASS = ["Private", "Self-emp-not-inc", "Federal-gov", "Local-gov"]


def _write_census(directory, rows, seed):
    rng = np.random.RandomState(seed)
    path = os.path.join(directory, f"census-{seed}.csv")
    lines = []
    for _ in range(rows):
        age = int(rng.randint(18, 80))
        hours = int(rng.randint(10, 60))
        education = EDUCATION[rng.randint(len(EDUCATION))]
        label = LABELS[int(age > 40 and hours > 35)]
        lines.append(
            f"{age},{WORKCLASS[rng.randint(4)]},{education},job{rng.randint(7)},{hours},{label}"
        )
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def _vocab_file(directory, name, words):
    path = os.path.join(directory, name)
    with open(path, "w") as f:
        f.write("\n".join(words) + "\n")
    return path


def _csv_input_fn(path, label_ids, batch_size=16, epochs=None):
    """The samples' input_fn: TextLineDataset + decode_csv; labels looked up in a table."""

    def input_fn():
        def parse(line):
            columns = tf.io.decode_csv(line, record_defaults=DEFAULTS)
            features = dict(zip(CSV_COLUMNS, columns))
            label = features.pop("income")
            if label_ids:
                table = tf.lookup.StaticHashTable(
                    tf.lookup.KeyValueTensorInitializer(
                        tf.constant(LABELS), tf.constant([0, 1], tf.int64)
                    ),
                    -1,
                )
                label = table.lookup(label)
            return features, label

        dataset = tf.data.TextLineDataset(path).repeat(epochs).batch(batch_size)
        return dataset.map(parse)

    return input_fn


def _json_serving_input_fn():
    inputs = {
        "age": tf.placeholder(tf.float32, [None]),
        "workclass": tf.placeholder(tf.string, [None]),
        "education": tf.placeholder(tf.string, [None]),
        "occupation": tf.placeholder(tf.string, [None]),
        "hours_per_week": tf.placeholder(tf.float32, [None]),
    }
    features = {key: tf.expand_dims(tensor, -1) for key, tensor in inputs.items()}
    return export.ServingInputReceiver(features, inputs)


SERVING_BATCH = {
    "age": np.array([25.0, 52.0, 61.0], np.float32),
    "workclass": np.array([b"Private", b"Federal-gov", b"Unknown"]),
    "education": np.array([b"Masters", b"HS-grad", b"Never-seen"]),
    "occupation": np.array([b"job1", b"job3", b"job9"]),
    "hours_per_week": np.array([20.0, 45.0, 50.0], np.float32),
}


def _predict_batch(est):
    def input_fn():
        features = {k: tf.constant(v.reshape(-1, 1)) for k, v in SERVING_BATCH.items()}
        return tf.data.Dataset.from_tensors(features)

    return list(est.predict(input_fn))


def _census_model_fn(features, labels, mode, params):
    """The samples' custom estimator: input_layer over vocabulary columns, a DNN, string
    classes from a reverse lookup table in PREDICT."""
    columns = [
        fc.numeric_column("age"),
        fc.numeric_column("hours_per_week"),
        fc.indicator_column(
            fc.categorical_column_with_vocabulary_file("education", params["education_vocab"])
        ),
        fc.indicator_column(fc.categorical_column_with_vocabulary_list("workclass", WORKCLASS)),
        fc.embedding_column(fc.categorical_column_with_hash_bucket("occupation", 10), 3),
    ]
    net = tf.feature_column.input_layer(features, columns)
    net = tf.layers.dense(net, 8, activation=tf.nn.relu)
    logits = tf.layers.dense(net, len(LABELS))
    probabilities = tf.nn.softmax(logits)
    class_ids = tf.argmax(logits, 1)
    if mode == estimator.ModeKeys.PREDICT:
        names = tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(tf.constant([0, 1], tf.int64), LABELS), "UNK"
        )
        predictions = {
            "class_ids": class_ids,
            "classes": names.lookup(class_ids),
            "probabilities": probabilities,
        }
        return estimator.EstimatorSpec(
            mode,
            predictions=predictions,
            export_outputs={"serving_default": export.PredictOutput(predictions)},
        )
    loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
    metrics = {"accuracy": tf.metrics.accuracy(labels, class_ids)}
    train_op = tf.train.AdamOptimizer(0.05).minimize(loss, tf.train.get_global_step())
    return estimator.EstimatorSpec(mode, loss=loss, train_op=train_op, eval_metric_ops=metrics)


def test_census_custom_model_fn_with_vocabulary_columns_final_exporter_serves(tmp_path):
    data = str(tmp_path / "data")
    os.makedirs(data)
    train_file, eval_file = _write_census(data, 96, 1), _write_census(data, 32, 2)
    vocab = _vocab_file(data, "education.txt", EDUCATION)
    est = estimator.Estimator(
        _census_model_fn,
        model_dir=str(tmp_path / "model"),
        params={"education_vocab": vocab},
        config=estimator.RunConfig(save_checkpoints_steps=10),
    )
    exporter = export.FinalExporter("census", _json_serving_input_fn)
    estimator.train_and_evaluate(
        est,
        estimator.TrainSpec(_csv_input_fn(train_file, True), max_steps=20),
        estimator.EvalSpec(
            _csv_input_fn(eval_file, True, epochs=1),
            steps=None,
            exporters=[exporter],
            throttle_secs=0,
        ),
    )
    exports = glob.glob(str(tmp_path / "model" / "export" / "census" / "*"))
    assert len(exports) == 1, exports
    assert os.listdir(os.path.join(exports[0], "assets")) == ["education.txt"]
    expected = _predict_batch(est)
    os.remove(vocab)  # served from the export's assets/, not the original file

    served = tf2.saved_model.load(exports[0]).signatures["serving_default"](
        **{k: tf2.constant(v) for k, v in SERVING_BATCH.items()}
    )
    assert served["classes"].numpy().tolist() == [p["classes"] for p in expected]
    np.testing.assert_allclose(
        served["probabilities"].numpy(),
        np.stack([p["probabilities"] for p in expected]),
        rtol=1e-5,
        atol=1e-6,
    )


def test_census_canned_wide_and_deep_with_crossed_columns_exports_and_serves(tmp_path):
    data = str(tmp_path / "data")
    os.makedirs(data)
    train_file, eval_file = _write_census(data, 96, 3), _write_census(data, 32, 4)
    vocab = _vocab_file(data, "education.txt", EDUCATION)
    age = fc.numeric_column("age")
    age_buckets = fc.bucketized_column(age, [25, 30, 35, 40, 45, 50, 55, 60, 65])
    education = fc.categorical_column_with_vocabulary_file("education", vocab)
    workclass = fc.categorical_column_with_vocabulary_list("workclass", WORKCLASS)
    occupation = fc.categorical_column_with_hash_bucket("occupation", 10)
    wide = [
        education,
        workclass,
        occupation,
        age_buckets,
        fc.crossed_column(["education", "occupation"], 40),
        fc.crossed_column([age_buckets, "education", "occupation"], 40),
    ]
    deep = [
        fc.indicator_column(workclass),
        fc.indicator_column(education),
        fc.embedding_column(occupation, 4),
        age,
        fc.numeric_column("hours_per_week"),
    ]
    est = estimator.DNNLinearCombinedClassifier(
        model_dir=str(tmp_path / "model"),
        linear_feature_columns=wide,
        dnn_feature_columns=deep,
        dnn_hidden_units=[8, 4],
        label_vocabulary=LABELS,
        config=estimator.RunConfig(save_checkpoints_steps=10),
    )
    spec = fc.make_parse_example_spec(wide + deep)
    exporter = export.FinalExporter("census", export.build_parsing_serving_input_receiver_fn(spec))
    estimator.train_and_evaluate(
        est,
        estimator.TrainSpec(_csv_input_fn(train_file, False), max_steps=20),
        estimator.EvalSpec(
            _csv_input_fn(eval_file, False, epochs=1),
            steps=None,
            exporters=[exporter],
            throttle_secs=0,
        ),
    )
    (path,) = glob.glob(str(tmp_path / "model" / "export" / "census" / "*"))
    expected = _predict_batch(est)
    os.remove(vocab)

    examples = []
    for i in range(3):
        feature = {}
        for key, values in SERVING_BATCH.items():
            if values.dtype.kind == "S":
                feature[key] = tf.train.Feature(bytes_list=tf.train.BytesList(value=[values[i]]))
            else:
                feature[key] = tf.train.Feature(
                    float_list=tf.train.FloatList(value=[float(values[i])])
                )
        examples.append(tf.train.Example(features=tf.train.Features(feature=feature)))
    serialized = tf2.constant([e.SerializeToString() for e in examples])
    loaded = tf2.saved_model.load(path)
    classify = loaded.signatures["serving_default"](inputs=serialized)
    assert classify["classes"].numpy().tolist() == [[b" <=50K", b" >50K"]] * 3
    np.testing.assert_allclose(
        classify["scores"].numpy(),
        np.stack([p["probabilities"] for p in expected]),
        rtol=1e-5,
        atol=1e-6,
    )
    predicted = loaded.signatures["predict"](examples=serialized)
    assert predicted["classes"].numpy().tolist() == [list(p["classes"]) for p in expected]
