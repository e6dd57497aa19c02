"""RNNClassifier / RNNEstimator over sequence feature columns: a model_dir written by
tf.estimator 2.15's RNNClassifier (fixtures/rnn_tf_estimator_2_15, made by its
make_fixture.py) evaluates, predicts and resumes here; the same data, seeds and steps reach
2.15's accuracy."""

import json
import os
import shutil

import numpy as np
import pytest
import tensorflow as tf
from helpers import FIXTURES, assert_predictions_match

import keras_estimator
from keras_estimator import experimental

FIXTURE = os.path.join(FIXTURES, "rnn_tf_estimator_2_15")


def make_data():
    rng = np.random.RandomState(0)  # make_fixture.py's data
    lengths = rng.randint(1, 8, size=256)
    tokens = [rng.randint(0, 10, size=n) for n in lengths]
    labels = np.array([int(3 in t) for t in tokens], np.int64)
    return np.concatenate(tokens).astype(np.int64), lengths.astype(np.int64), labels


FLAT, LENGTHS, LABELS = make_data()


def input_fn(batch, repeat, count=256, labels=LABELS):
    def f():
        ragged = tf.RaggedTensor.from_row_lengths(FLAT, LENGTHS)[:count]
        ds = tf.data.Dataset.from_tensor_slices((ragged, labels[:count]))
        if repeat:
            ds = ds.shuffle(256, seed=0).repeat()
        return ds.batch(batch).map(lambda t, y: ({"tokens": t.to_sparse()}, y))

    return f


def columns():
    tokens = tf.feature_column.sequence_categorical_column_with_identity("tokens", 10)
    return [tf.feature_column.embedding_column(tokens, 4)]


def make(model_dir, cell_type="lstm", seed=1, **kwargs):
    config = keras_estimator.RunConfig(tf_random_seed=seed, keep_checkpoint_max=1)
    return experimental.RNNClassifier(sequence_feature_columns=columns(), units=[8],
                                      cell_type=cell_type, model_dir=model_dir, config=config,
                                      **kwargs)  # fmt: skip


@pytest.fixture(scope="module")
def expected():
    with open(os.path.join(FIXTURE, "expected.json")) as f:
        return json.load(f)


def test_model_dir_of_tf_estimator_evaluates_predicts_and_resumes(tmp_path, expected):
    want = expected["fixture"]
    model_dir = str(tmp_path / "rnn")
    shutil.copytree(os.path.join(FIXTURE, "lstm_model"), model_dir)
    est = make(model_dir)
    got = est.evaluate(input_fn(256, False), steps=1)
    assert sorted(got) == sorted(want["metrics"])
    for key, value in want["metrics"].items():
        assert float(got[key]) == pytest.approx(value, rel=1e-4, abs=1e-5), key
    predictions = list(est.predict(input_fn(5, False, 5)))
    assert list(predictions[0]) == ["logits", "logistic", "probabilities", "class_ids",
                                    "classes", "all_class_ids", "all_classes"]  # fmt: skip
    assert_predictions_match(predictions, want["predictions"], rtol=1e-4, atol=1e-5)
    # Every 2.15 variable is found by name (the Adagrad accumulators too) and training goes on.
    names = dict(tf.train.list_variables(model_dir))
    assert {n: s for n, s in want["variables"]}.items() <= names.items()
    est.train(input_fn(32, True), steps=100)
    assert est.get_variable_value("global_step") == 300
    resumed = est.evaluate(input_fn(256, False), steps=1)
    assert resumed["accuracy"] == pytest.approx(want["resumed_100_steps"]["accuracy"], abs=0.02)
    assert resumed["loss"] == pytest.approx(want["resumed_100_steps"]["loss"], rel=0.05)


def test_sequences_of_one_batch_are_padded_to_its_longest(tmp_path):
    est = make(str(tmp_path), cell_type="gru")
    est.train(input_fn(4, True), steps=3)
    predictions = list(est.predict(input_fn(3, False, 6)))  # batches of lengths 6 and 7
    assert len(predictions) == 6
    assert all(p["probabilities"].shape == (2,) for p in predictions)


def test_rnn_estimator_with_a_head_and_cell_fn(tmp_path):
    def rnn_cell_fn():
        return [tf.keras.layers.GRUCell(6), tf.keras.layers.SimpleRNNCell(4)]

    est = experimental.RNNEstimator(
        head=keras_estimator.RegressionHead(), sequence_feature_columns=columns(),
        rnn_cell_fn=rnn_cell_fn, model_dir=str(tmp_path), optimizer="Adam",
    )  # fmt: skip
    labels = LABELS.astype(np.float32)
    est.train(input_fn(32, True, labels=labels), steps=5)
    assert sorted(est.evaluate(input_fn(256, False, labels=labels), steps=1)) == [
        "average_loss", "global_step", "label/mean", "loss", "prediction/mean",
    ]  # fmt: skip
    names = est.get_variable_names()
    assert "rnn_model/rnn/stacked_rnn_cells/gru_cell/kernel" in names or any(
        n.startswith("rnn_model/rnn/") and "gru_cell/kernel" in n for n in names
    )


def test_bad_arguments_raise_tf_estimators_errors():
    with pytest.raises(ValueError, match="units and cell_type must not be specified"):
        experimental.RNNClassifier(columns(), units=[4], rnn_cell_fn=lambda: None)
    with pytest.raises(ValueError, match="must be a `_SequentialHead` object"):
        experimental.RNNEstimator(keras_estimator.BinaryClassHead(), columns(), units=[4],
                                  return_sequences=True)  # fmt: skip
    weights = tf.feature_column.numeric_column("w")
    with pytest.raises(TypeError, match="weight_column must be None or a string"):
        experimental.RNNClassifier(columns(), units=[4], return_sequences=True,
                                   weight_column=weights)  # fmt: skip
    with pytest.raises(TypeError, match="`sequence_mask` column must be a string"):
        experimental.RNNClassifier(columns(), units=[4], return_sequences=True, sequence_mask=3)


@pytest.mark.slow
@pytest.mark.parametrize("cell_type", ["simple_rnn", "lstm", "gru"])
def test_same_data_seed_and_steps_reach_the_accuracy_of_tf_estimator(tmp_path, expected,
                                                                     cell_type):  # fmt: skip
    for seed in (1, 2, 3):
        est = make(str(tmp_path / str(seed)), cell_type, seed)
        est.train(input_fn(32, True), steps=600)
        got = est.evaluate(input_fn(256, False), steps=1)
        want = expected["accuracy_after_600_steps"][f"{cell_type}_{seed}"]
        assert got["accuracy"] == pytest.approx(want["accuracy"], rel=0.02)
        assert got["auc"] == pytest.approx(want["auc"], rel=0.02)


# -- return_sequences=True: every valid step an example ---------------------------------------
SEQUENCES = os.path.join(FIXTURES, "rnn_sequences_tf_estimator_2_15")


def sequence_data():
    rng = np.random.RandomState(1)  # rnn_sequences_tf_estimator_2_15/make_fixture.py's data
    lengths = rng.randint(1, 8, size=256)
    tokens = [rng.randint(0, 10, size=n) for n in lengths]
    seen = np.concatenate([np.cumsum(t == 3) for t in tokens])
    flat = np.concatenate(tokens).astype(np.int64)
    weights = (1 + flat % 2).astype(np.float32)
    flipped = rng.uniform(size=flat.size) < 0.1
    binary = np.where(flipped, 1 - seen.clip(0, 1), seen.clip(0, 1))
    return flat, lengths.astype(np.int64), binary, seen.clip(0, 2), weights


S_FLAT, S_LENGTHS, S_BINARY, S_THREE, S_WEIGHTS = sequence_data()


def sequence_input_fn(batch, repeat, labels, count=256, sparse_labels=False, mask=False):
    """Tokens as SparseTensors (dense_shape[1]: the batch's longest), weights `w` and labels
    padded [batch, time] (labels a SparseTensor with `sparse_labels`)."""

    def f():
        def ragged(values):
            return tf.RaggedTensor.from_row_lengths(values, S_LENGTHS)[:count]

        ds = tf.data.Dataset.from_tensor_slices((ragged(S_FLAT), ragged(S_WEIGHTS),
                                                 ragged(labels)))  # fmt: skip
        if repeat:
            ds = ds.shuffle(256, seed=0).repeat()

        def split(t, w, y):
            features = {"tokens": t.to_sparse(), "w": w.to_tensor()}
            if mask:
                features["mask"] = tf.ones_like(w, tf.bool).to_tensor(False)
            return features, y.to_sparse() if sparse_labels else y.to_tensor()

        return ds.batch(batch).map(split)

    return f


def make_sequential(model_dir, seed, **kwargs):
    config = keras_estimator.RunConfig(tf_random_seed=seed, keep_checkpoint_max=1)
    return experimental.RNNClassifier(sequence_feature_columns=columns(), units=[8],
                                      model_dir=str(model_dir), config=config,
                                      return_sequences=True, optimizer="Adam",
                                      **kwargs)  # fmt: skip


@pytest.fixture(scope="module")
def sequences_expected():
    with open(os.path.join(SEQUENCES, "expected.json")) as f:
        return json.load(f)


def check_sequential(est, labels, want, steps):
    est.train(sequence_input_fn(32, True, labels), steps=steps)
    got = est.evaluate(sequence_input_fn(256, False, labels), steps=1)
    assert sorted(got) == sorted(want["metrics"])
    assert got["global_step"] == want["metrics"]["global_step"]
    # Only the valid steps count: these depend on the data alone, so they are 2.15's exactly.
    for key in ("label/mean", "accuracy_baseline"):
        if key in want["metrics"]:
            assert float(got[key]) == pytest.approx(want["metrics"][key], rel=1e-5), key
    for key in ("accuracy", "auc", "auc_precision_recall"):
        if key in want["metrics"]:
            assert float(got[key]) == pytest.approx(want["metrics"][key], rel=0.02), key
    predictions = list(est.predict(sequence_input_fn(3, False, labels, count=3)))
    assert list(predictions[0]) == want["prediction_keys"]
    assert [{k: list(v.shape) for k, v in p.items()} for p in predictions] == want[
        "prediction_shapes"
    ]
    for p, w in zip(predictions, want["predictions"], strict=True):
        assert p["sequence_mask"].tolist() == w["sequence_mask"]
        assert p["class_ids"].dtype == np.int64
        assert p["all_classes"].astype(str).tolist() == w["all_classes"]
    return got


def test_return_sequences_classifies_each_valid_step_as_tf_estimator(tmp_path, sequences_expected):
    want = sequences_expected["binary_lstm_1"]
    est = make_sequential(tmp_path, 1, cell_type="lstm")
    got = check_sequential(est, S_BINARY, want, sequences_expected["steps"])
    # Labels as a SparseTensor (its values in index order) are the same per-step labels.
    sparse = est.evaluate(sequence_input_fn(256, False, S_BINARY, sparse_labels=True), steps=1)
    assert {k: float(v) for k, v in sparse.items()} == pytest.approx(
        {k: float(v) for k, v in got.items()}, rel=1e-6
    )


def test_return_sequences_weights_each_step_and_takes_n_classes(tmp_path, sequences_expected):
    want = sequences_expected["three_gru_weighted_1"]["metrics"]
    est = make_sequential(tmp_path, 1, cell_type="gru", n_classes=3, weight_column="w")
    got = check_sequential(est, S_THREE, sequences_expected["three_gru_weighted_1"],
                           sequences_expected["steps"])  # fmt: skip
    # loss / average_loss is sum(weights) / steps: the weights of the valid steps only.
    assert got["loss"] / got["average_loss"] == pytest.approx(
        want["loss"] / want["average_loss"], rel=1e-4
    )
    assert got["loss"] / got["average_loss"] == pytest.approx(S_WEIGHTS.mean(), rel=1e-4)


def test_rnn_estimator_with_a_sequential_head_uses_the_features_mask(tmp_path):
    head = keras_estimator.canned.heads.SequentialHeadWrapper(
        keras_estimator.RegressionHead(), sequence_length_mask="mask"
    )  # fmt: skip
    est = experimental.RNNEstimator(head, columns(), units=4, cell_type="gru",
                                    return_sequences=True, model_dir=str(tmp_path))  # fmt: skip
    labels = S_BINARY.astype(np.float32)
    est.train(sequence_input_fn(32, True, labels, mask=True), steps=5)
    metrics = est.evaluate(sequence_input_fn(256, False, labels, mask=True), steps=1)
    assert metrics["label/mean"] == pytest.approx(labels.mean(), rel=1e-5)
    (first,) = est.predict(sequence_input_fn(1, False, labels, count=1, mask=True))
    assert first["predictions"].shape == (S_LENGTHS[0], 1)
    assert first["mask"].tolist() == [True] * S_LENGTHS[0]


@pytest.mark.slow
@pytest.mark.parametrize("seed", [2, 3])
def test_return_sequences_reaches_tf_estimators_metrics_for_other_seeds(tmp_path,
                                                                        sequences_expected,
                                                                        seed):  # fmt: skip
    steps = sequences_expected["steps"]
    check_sequential(make_sequential(tmp_path / "binary", seed, cell_type="lstm"), S_BINARY,
                     sequences_expected[f"binary_lstm_{seed}"], steps)  # fmt: skip
    est = make_sequential(tmp_path / "three", seed, cell_type="gru", n_classes=3,
                          weight_column="w")  # fmt: skip
    check_sequential(est, S_THREE, sequences_expected[f"three_gru_weighted_{seed}"], steps)
