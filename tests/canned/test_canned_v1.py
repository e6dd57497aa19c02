"""tf.compat.v1.estimator's canned estimators (keras_estimator.v1): model_dirs written by
tensorflow-estimator 2.15's v1 classes (fixtures/canned_v1_tf_estimator_2_15, made by its
make_fixture.py) evaluate, predict and resume here; the v1 semantics (summed loss, v1
optimizers) train iris to 2.15's accuracy; install() maps tf.compat.v1.estimator to them."""

import json
import os
import shutil

import numpy as np
import pytest
import tensorflow as tf
from helpers import (
    FIXTURES,
    assert_predictions_match,
    iris_columns,
    iris_features,
    iris_like,
    mirrored_strategy,
)

import keras_estimator
from keras_estimator import v1

FIXTURE = os.path.join(FIXTURES, "canned_v1_tf_estimator_2_15")
V1_NAMES = [
    "BaselineClassifier", "BaselineEstimator", "BaselineRegressor", "DNNClassifier",
    "DNNEstimator", "DNNLinearCombinedClassifier", "DNNLinearCombinedEstimator",
    "DNNLinearCombinedRegressor", "DNNRegressor", "Estimator", "LinearClassifier",
    "LinearEstimator", "LinearRegressor", "classifier_parse_example_spec",
    "regressor_parse_example_spec",
]  # fmt: skip


# The estimators and labels of make_fixture.py, made with our v1 classes.
CASES = {
    "dnn": (lambda d: v1.DNNClassifier([10, 10], iris_columns(), d, n_classes=3), lambda y: y),
    "linear": (lambda d: v1.LinearClassifier(iris_columns(), d, n_classes=3), lambda y: y),
    "dnn_linear_combined": (
        lambda d: v1.DNNLinearCombinedClassifier(
            d,
            linear_feature_columns=iris_columns(),
            dnn_feature_columns=iris_columns(),
            dnn_hidden_units=[8],
            dnn_optimizer="Adam",
        ),  # fmt: skip
        lambda y: (y == 0).astype(np.int64),
    ),
    "baseline": (lambda d: v1.BaselineRegressor(d), lambda y: y.astype(np.float32)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_v1_checkpoint_of_tf_estimator_evaluates_predicts_and_resumes(tmp_path, name):
    make, labels_of = CASES[name]
    model_dir = str(tmp_path / name)
    shutil.copytree(os.path.join(FIXTURE, f"{name}_model"), model_dir)
    with open(os.path.join(FIXTURE, f"{name}_expected.json")) as f:
        expected = json.load(f)
    x, y = iris_like()
    labels = labels_of(y)
    est = make(model_dir)

    got = est.evaluate(
        lambda: tf.data.Dataset.from_tensor_slices((iris_features(x), labels)).batch(150), steps=1
    )
    assert sorted(got) == sorted(expected["metrics"])  # 2.15's metric keys
    for key, value in expected["metrics"].items():
        assert float(got[key]) == pytest.approx(value, rel=1e-5, abs=1e-5), key
    # The loss is summed over the batch: 150 examples, one batch.
    assert float(got["loss"]) == pytest.approx(150 * float(got["average_loss"]), rel=1e-5)

    predictions = list(
        est.predict(lambda: tf.data.Dataset.from_tensor_slices(iris_features(x[:5])).batch(5))
    )
    assert_predictions_match(predictions, expected["predictions"], atol=1e-5)

    # Training resumes from 2.15's checkpoint: every optimizer slot is found by name, and
    # an accumulator (Adagrad's, Ftrl's: they only grow) goes on from 2.15's value.
    accumulator = next(n for n in est.get_variable_names() if n.endswith(("Adagrad", "Ftrl")))
    before = est.get_variable_value(accumulator)
    assert before.max() > 0.1  # trained, not the initial value
    est.train(
        lambda: tf.data.Dataset.from_tensor_slices((iris_features(x), labels)).repeat().batch(32),
        steps=5,
    )
    assert est.get_variable_value("global_step") == 205
    written = [n for n, _ in tf.train.list_variables(os.path.join(FIXTURE, f"{name}_model"))]
    assert est.get_variable_names() == written
    assert np.all(est.get_variable_value(accumulator) >= before)
    assert np.any(est.get_variable_value(accumulator) > before)


@pytest.mark.parametrize("name", ["dnn_16_16", "linear"])
def test_v1_classifier_reaches_tf_estimator_accuracy_on_iris(tmp_path, name):
    with open(os.path.join(FIXTURE, "metadata.json")) as f:
        meta = json.load(f)
    seed = meta["seeds"][0]
    want = meta["accuracy_after_400_steps_batch_16"][name][0]  # 2.15, the same seed
    config = v1.RunConfig(model_dir=str(tmp_path), tf_random_seed=seed)
    if name == "linear":
        est = v1.LinearClassifier(iris_columns(), n_classes=3, config=config)
    else:
        est = v1.DNNClassifier([16, 16], iris_columns(), n_classes=3, config=config)
    x, y = iris_like()
    est.train(
        lambda: (
            tf.data.Dataset.from_tensor_slices((iris_features(x), y))
            .shuffle(150, seed=0)
            .repeat()
            .batch(16)
        ),
        steps=400,
    )
    got = est.evaluate(
        lambda: tf.data.Dataset.from_tensor_slices((iris_features(x), y)).batch(150), steps=1
    )
    assert abs(float(got["accuracy"]) - want) <= 0.02, (float(got["accuracy"]), want)


def test_v1_names_are_their_own_objects_with_v1_defaults():
    for name in V1_NAMES:
        assert getattr(v1, name) is not getattr(keras_estimator, name), name
    assert issubclass(v1.DNNClassifier, v1.Estimator)
    assert issubclass(v1.Estimator, keras_estimator.Estimator)
    assert v1.EstimatorSpec is keras_estimator.EstimatorSpec  # the rest is shared
    assert v1.tpu is keras_estimator.tpu
    with pytest.raises(ValueError, match="Invalid loss_reduction: sum_over_batch_size"):
        v1.LinearClassifier(iris_columns(), loss_reduction="sum_over_batch_size")
    with pytest.raises(ValueError, match="Unsupported optimizer name: Adadelta"):
        v1.DNNRegressor([4], iris_columns(), optimizer="Adadelta")
    with pytest.raises(AttributeError, match="tf.compat.v1.estimator"):
        _ = v1.NoSuchName
    spec = v1.classifier_parse_example_spec(iris_columns(), label_key="label")
    assert spec["label"] == tf.io.FixedLenFeature((1,), tf.int64)


def test_v1_dnn_with_a_keras_optimizer_is_refused_with_the_fix(tmp_path):
    import keras

    x, y = iris_like()
    est = v1.DNNClassifier([4], iris_columns(), str(tmp_path), n_classes=3,
                           optimizer=keras.optimizers.Adagrad(0.1))  # fmt: skip
    with pytest.raises(ValueError, match="tf.compat.v1.train optimizers"):
        est.train(
            lambda: tf.data.Dataset.from_tensor_slices((iris_features(x), y)).batch(8), steps=1
        )


def test_install_maps_tf_compat_v1_estimator_to_the_v1_namespace():
    keras_estimator.install()
    try:
        assert tf.compat.v1.estimator is v1
        assert tf.estimator is keras_estimator
        assert tf.compat.v1.estimator.DNNClassifier is not tf.estimator.DNNClassifier
        from tensorflow.compat.v1 import estimator

        assert estimator.LinearClassifier is v1.LinearClassifier
        assert estimator.experimental.dnn_logit_fn_builder  # the shared names are there too
    finally:
        keras_estimator.uninstall()
    assert not hasattr(tf.compat.v1, "estimator")


def test_v1_summed_loss_under_mirrored_strategy_is_the_whole_batch_summed(tmp_path):
    # Two replicas, a batch of 16 each: their summed losses' gradients are added, with no
    # rescaling (2.15's v1 optimizers rescaled MEAN losses only), which is one device
    # summing the loss over the 32 rows.
    x, y = iris_like()
    weights = []
    for strategy, batch in ((None, 32), (mirrored_strategy(), 16)):
        config = v1.RunConfig(model_dir=str(tmp_path / str(batch)), train_distribute=strategy)
        optimizer = tf.compat.v1.train.GradientDescentOptimizer(0.001)
        est = v1.LinearClassifier(iris_columns(), n_classes=3, optimizer=optimizer, config=config)
        est.train(
            lambda b=batch: tf.data.Dataset.from_tensor_slices((iris_features(x), y)).batch(b),
            steps=3,
        )
        weights.append(est.get_variable_value("linear/linear_model/PetalLength/weights"))
    assert np.abs(weights[0]).max() > 0.01
    np.testing.assert_allclose(weights[1], weights[0], rtol=1e-5, atol=1e-6)


def test_v1_binary_classifier_exports_tf_estimator_signatures(tmp_path):
    # Signatures and their outputs as tf.compat.v1.estimator.LinearClassifier 2.15 exported
    # them (measured with tensorflow-estimator 2.15.0).
    want = {
        "classification": ["classes", "scores"],
        "predict": [
            "all_class_ids",
            "all_classes",
            "class_ids",
            "classes",
            "logistic",
            "logits",
            "probabilities",
        ],  # fmt: skip
        "regression": ["outputs"],
        "serving_default": ["classes", "scores"],
    }
    x, y = iris_like()
    est = v1.LinearClassifier(iris_columns(), str(tmp_path / "model"))
    labels = (y == 0).astype(np.int64)
    est.train(
        lambda: tf.data.Dataset.from_tensor_slices((iris_features(x), labels)).batch(8), steps=2
    )
    receiver = v1.export.build_parsing_serving_input_receiver_fn(
        tf.feature_column.make_parse_example_spec(iris_columns())
    )
    path = est.export_saved_model(str(tmp_path / "export"), receiver)
    loaded = tf.saved_model.load(path.decode() if isinstance(path, bytes) else path)
    got = {k: sorted(s.structured_outputs) for k, s in loaded.signatures.items()}
    assert got == want
