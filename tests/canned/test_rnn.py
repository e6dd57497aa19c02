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
    with pytest.raises(NotImplementedError, match="return_sequences"):
        experimental.RNNClassifier(columns(), units=[4], return_sequences=True)


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
