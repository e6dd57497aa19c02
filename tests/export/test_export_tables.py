"""Exports whose serving graph holds lookup tables: vocabulary lists and files, hash and
identity columns, crossed columns and embeddings, in canned estimators and model_fns.

Each SavedModel is served with plain `tf.saved_model.load(path).signatures[...]` and must
give predict()'s values; a vocabulary file must travel in the export's `assets/`.
"""

import os

import keras
import numpy as np
import pytest
import tensorflow as tf2
import tensorflow.compat.v1 as tf
from helpers import make_estimator

import keras_estimator as estimator
from keras_estimator import export

fc = tf2.feature_column
ROWS = 8
EDUCATION = ["Bachelors", "HS-grad", "Masters", "Doctorate"]


def _records():
    rng = np.random.RandomState(0)
    return {
        "age": rng.uniform(18, 80, ROWS).astype(np.float32).reshape(-1, 1),
        "education": np.array([[EDUCATION[i % 4]] for i in range(ROWS)]),
        "workclass": np.array([["Private" if i % 3 else "Self-emp"] for i in range(ROWS)]),
        "occupation": np.array([[f"job{i % 5}"] for i in range(ROWS)]),
        "hours_code": np.array([[i % 6] for i in range(ROWS)], np.int64),
    }


def _vocab_file(directory):
    path = os.path.join(directory, "education.txt")
    with open(path, "w") as f:
        f.write("\n".join(EDUCATION) + "\n")
    return path


def _columns(vocab_path):
    """(linear columns, dnn columns): every categorical kind 2.15's canned models took."""
    age = fc.numeric_column("age")
    age_buckets = fc.bucketized_column(age, [25, 35, 45, 55, 65])
    education = fc.categorical_column_with_vocabulary_file("education", vocab_path)
    workclass = fc.categorical_column_with_vocabulary_list("workclass", ["Private", "Self-emp"])
    occupation = fc.categorical_column_with_hash_bucket("occupation", 20)
    hours = fc.categorical_column_with_identity("hours_code", 6)
    crossed = fc.crossed_column([age_buckets, "education"], 50)
    linear = [age, age_buckets, education, workclass, occupation, hours, crossed]
    dnn = [
        age,
        fc.indicator_column(education),
        fc.indicator_column(workclass),
        fc.embedding_column(occupation, 3),
        fc.indicator_column(hours),
        fc.embedding_column(crossed, 2),
    ]
    return linear, dnn


def _input_fn(records, labels):
    def input_fn():
        return tf.data.Dataset.from_tensor_slices((dict(records), labels)).batch(4).repeat()

    return input_fn


def _serialized(records):
    examples = []
    for i in range(ROWS):
        feature = {}
        for key, values in records.items():
            value = values[i].tolist()
            if values.dtype.kind in "US":
                feature[key] = tf.train.Feature(
                    bytes_list=tf.train.BytesList(value=[v.encode() for v in value])
                )
            elif values.dtype.kind == "f":
                feature[key] = tf.train.Feature(float_list=tf.train.FloatList(value=value))
            else:
                feature[key] = tf.train.Feature(int64_list=tf.train.Int64List(value=value))
        examples.append(tf.train.Example(features=tf.train.Features(feature=feature)))
    return tf2.constant([e.SerializeToString() for e in examples])


def _predictions(est, records):
    def input_fn():
        return tf.data.Dataset.from_tensor_slices(dict(records)).batch(ROWS)

    return list(est.predict(input_fn))


CANNED = {
    "LinearClassifier": lambda lin, dnn, d: estimator.LinearClassifier(lin, model_dir=d),
    "LinearRegressor": lambda lin, dnn, d: estimator.LinearRegressor(lin, model_dir=d),
    "DNNClassifier": lambda lin, dnn, d: estimator.DNNClassifier([4], dnn, model_dir=d),
    "DNNRegressor": lambda lin, dnn, d: estimator.DNNRegressor([4], dnn, model_dir=d),
    "DNNLinearCombinedClassifier": lambda lin, dnn, d: estimator.DNNLinearCombinedClassifier(
        model_dir=d, linear_feature_columns=lin, dnn_feature_columns=dnn, dnn_hidden_units=[4]
    ),
    "DNNLinearCombinedRegressor": lambda lin, dnn, d: estimator.DNNLinearCombinedRegressor(
        model_dir=d, linear_feature_columns=lin, dnn_feature_columns=dnn, dnn_hidden_units=[4]
    ),
}


@pytest.mark.parametrize("kind", sorted(CANNED))
def test_canned_estimator_with_categorical_columns_exports_and_serves_predict_values(
    tmp_path, kind
):
    vocab = _vocab_file(str(tmp_path))
    linear, dnn = _columns(vocab)
    records = _records()
    labels = (records["age"] > 40).astype(np.float32 if "Regressor" in kind else np.int64)
    est = CANNED[kind](linear, dnn, str(tmp_path / "model"))
    est.train(_input_fn(records, labels), steps=3)
    expected = _predictions(est, records)

    spec = fc.make_parse_example_spec(linear + dnn)
    path = est.export_saved_model(
        str(tmp_path / "export"), export.build_parsing_serving_input_receiver_fn(spec)
    ).decode()
    assert os.listdir(os.path.join(path, "assets")) == ["education.txt"]
    os.remove(vocab)  # the export must not need the original vocabulary file

    served = tf2.saved_model.load(path).signatures["predict"](examples=_serialized(records))
    key = "logistic" if "Classifier" in kind else "predictions"
    np.testing.assert_allclose(
        served[key].numpy(), np.stack([p[key] for p in expected]), rtol=1e-5, atol=1e-6
    )
    if "Classifier" in kind:
        classify = tf2.saved_model.load(path).signatures["serving_default"]
        scores = classify(inputs=_serialized(records))["scores"].numpy()
        np.testing.assert_allclose(
            scores, np.stack([p["probabilities"] for p in expected]), rtol=1e-5, atol=1e-6
        )


WORDS = ["red", "green", "blue"]


def _lookup_model_fn(features, labels, mode, params):
    """A model_fn with its own tables: a vocabulary file to ids (one OOV bucket), an id
    embedding, and a reverse table from class id to class name."""
    ids_table = tf.lookup.StaticVocabularyTable(
        tf.lookup.TextFileInitializer(
            params["vocab"],
            tf.string,
            tf.lookup.TextFileIndex.WHOLE_LINE,
            tf.int64,
            tf.lookup.TextFileIndex.LINE_NUMBER,
        ),
        num_oov_buckets=1,
    )
    ids = ids_table.lookup(features["word"][:, 0])
    embeddings = tf.get_variable("embeddings", [len(WORDS) + 1, 4])
    logits = tf.layers.dense(tf.nn.embedding_lookup(embeddings, ids), 2)
    class_ids = tf.argmax(logits, 1)
    if mode == estimator.ModeKeys.PREDICT:
        names = tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(tf.constant([0, 1], tf.int64), ["warm", "cold"]),
            "unknown",
        )
        predictions = {"ids": ids, "names": names.lookup(class_ids), "logits": logits}
        return estimator.EstimatorSpec(mode, predictions=predictions)
    loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
    if mode == estimator.ModeKeys.EVAL:
        return estimator.EstimatorSpec(
            mode, loss=loss, eval_metric_ops={"accuracy": tf.metrics.accuracy(labels, class_ids)}
        )
    train_op = tf.train.GradientDescentOptimizer(0.5).minimize(loss, tf.train.get_global_step())
    return estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def _word_input_fn():
    words = tf.constant([["red"], ["green"], ["blue"], ["black"]])
    return tf.data.Dataset.from_tensors(({"word": words}, tf.constant([0, 1, 1, 0]))).repeat()


def _raw_word_receiver():
    return export.build_raw_serving_input_receiver_fn(
        {"word": tf2.TensorSpec([None, 1], tf2.string)}
    )


def test_model_fn_tables_export_through_every_entry_point_and_serve(tmp_path):
    vocab = str(tmp_path / "words.txt")
    with open(vocab, "w") as f:
        f.write("\n".join(WORDS) + "\n")
    est = make_estimator(tmp_path / "model", _lookup_model_fn, params={"vocab": vocab})
    est.train(_word_input_fn, steps=4)
    words = np.array([["blue"], ["black"], ["red"]])
    expected = list(est.predict(lambda: tf.data.Dataset.from_tensors({"word": tf.constant(words)})))
    eval_result = est.evaluate(_word_input_fn, steps=1)
    checkpoint = est.latest_checkpoint()
    receiver = _raw_word_receiver()
    paths = [
        est.export_saved_model(str(tmp_path / "a"), receiver),
        est.export_savedmodel(str(tmp_path / "b"), receiver),
        est.experimental_export_all_saved_models(
            str(tmp_path / "c"), {estimator.ModeKeys.PREDICT: receiver}
        ),
        export.FinalExporter("final", receiver).export(
            est, str(tmp_path / "final"), checkpoint, eval_result, True
        ),
        export.LatestExporter("latest", receiver).export(
            est, str(tmp_path / "latest"), checkpoint, eval_result, False
        ),
        export.BestExporter("best", receiver).export(
            est, str(tmp_path / "best"), checkpoint, eval_result, False
        ),
    ]
    os.remove(vocab)
    for path in paths:
        path = path.decode() if isinstance(path, bytes) else path
        assert os.listdir(os.path.join(path, "assets")) == ["words.txt"], path
        served = tf2.saved_model.load(path).signatures["serving_default"](word=words)
        assert served["ids"].numpy().tolist() == [2, 3, 0]  # 'black' is the OOV bucket
        assert served["names"].numpy().tolist() == [p["names"] for p in expected]
        np.testing.assert_allclose(
            served["logits"].numpy(), np.stack([p["logits"] for p in expected]), rtol=1e-5
        )
    with pytest.raises(NotImplementedError, match="PREDICT"):
        est.experimental_export_all_saved_models(
            str(tmp_path / "d"), {estimator.ModeKeys.TRAIN: receiver}
        )


def _string_lookup_model_fn(features, labels, mode, params):
    """Keras 3 StringLookup layers: one made before the Estimator (its table exists before
    the model_fn is traced), one made inside the model_fn."""
    inside = keras.layers.StringLookup(vocabulary=["small", "large"])
    ids = params["outside"](features["color"])[:, 0] * 3 + inside(features["size"])[:, 0]
    embeddings = tf.get_variable("embeddings", [12, 1])
    logits = tf.squeeze(tf.nn.embedding_lookup(embeddings, ids), 1)
    if mode == estimator.ModeKeys.PREDICT:
        return estimator.EstimatorSpec(mode, predictions={"ids": ids, "logits": logits})
    loss = tf.reduce_mean(tf.square(logits - labels))
    train_op = tf.train.GradientDescentOptimizer(0.5).minimize(loss, tf.train.get_global_step())
    return estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def test_keras_string_lookups_made_inside_and_outside_the_model_fn_export(tmp_path):
    outside = keras.layers.StringLookup(vocabulary=["red", "green", "blue"])
    est = make_estimator(tmp_path / "model", _string_lookup_model_fn, params={"outside": outside})
    features = {
        "color": tf.constant([["red"], ["blue"], ["pink"]]),
        "size": tf.constant([["large"], ["small"], ["huge"]]),
    }
    est.train(lambda: tf.data.Dataset.from_tensors((features, [1.0, 0.0, 0.5])), steps=3)
    expected = list(est.predict(lambda: tf.data.Dataset.from_tensors(features)))
    receiver = export.build_raw_serving_input_receiver_fn(
        {
            "color": tf2.TensorSpec([None, 1], tf2.string),
            "size": tf2.TensorSpec([None, 1], tf2.string),
        }
    )
    path = est.export_saved_model(str(tmp_path / "export"), receiver).decode()
    served = tf2.saved_model.load(path).signatures["serving_default"](**features)
    assert served["ids"].numpy().tolist() == [p["ids"] for p in expected] == [5, 10, 0]  # OOV is 0
    np.testing.assert_allclose(served["logits"].numpy(), [p["logits"] for p in expected])
