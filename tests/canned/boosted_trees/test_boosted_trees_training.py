"""BoostedTreesClassifier / Regressor learn non-linear tables and stop by themselves after
n_trees x max_depth layers; evaluation and prediction keys are tf.estimator 2.8's."""

import numpy as np
import pytest
import tensorflow as tf
from bt_data import columns, eval_input, predict_input, train_input

import keras_estimator as estimator

BINARY_METRICS = {
    "accuracy", "accuracy_baseline", "auc", "auc_precision_recall", "average_loss",
    "label/mean", "loss", "precision", "prediction/mean", "recall", "global_step",
}  # fmt: skip
REGRESSION_METRICS = {"average_loss", "label/mean", "loss", "prediction/mean", "global_step"}


def test_classifier_learns_an_xor_no_linear_model_can(classifier, data):
    x, y, _ = data["test"]
    metrics = classifier.evaluate(eval_input(x, y))
    assert set(metrics) == BINARY_METRICS
    assert metrics["accuracy"] >= 0.93  # a linear model is at chance (0.5) on an XOR
    assert metrics["auc"] >= 0.97


def test_training_stops_by_itself_after_n_trees_times_max_depth_layers(classifier):
    value = classifier.get_variable_value
    assert value("boosted_trees/ensemble/num_finalized_trees") == 10
    assert value("boosted_trees/ensemble/num_attempted_layers") == 10 * 3
    # 2 quantile batches, the center-bias steps (2 batches each), 30 layers x 2 batches.
    step = value("global_step")
    assert 2 + 2 + 60 <= step <= 2 + 2 * 10 + 60
    assert (step - 2) % 2 == 0


def test_train_again_after_the_last_tree_changes_no_tree(classifier, data):
    x, y, _ = data["train"]
    before = classifier.get_variable_value("boosted_trees/ensemble/node_value")
    step = classifier.get_variable_value("global_step")
    classifier.train(train_input(x, y), steps=5)
    assert classifier.get_variable_value("global_step") <= step + 5
    np.testing.assert_array_equal(
        classifier.get_variable_value("boosted_trees/ensemble/node_value"), before
    )


def test_classifier_predictions_have_the_binary_head_keys(classifier, data):
    x, y, _ = data["test"]
    predictions = list(classifier.predict(predict_input(x[:5])))
    assert len(predictions) == 5
    assert set(predictions[0]) == {"logits", "logistic", "probabilities", "class_ids",
                                   "classes", "all_class_ids", "all_classes"}  # fmt: skip
    probabilities = np.array([p["probabilities"] for p in predictions])
    np.testing.assert_allclose(probabilities.sum(axis=1), 1.0, rtol=1e-6)


def test_regressor_fits_a_sine_and_a_square(regressor, data):
    x, _, target = data["test"]
    metrics = regressor.evaluate(eval_input(x, target))
    assert set(metrics) == REGRESSION_METRICS
    rmse = np.sqrt(metrics["average_loss"])
    assert rmse < 0.2, rmse  # noise 0.1; predicting the mean gives ~0.75
    assert np.std(target) > 0.6


def test_multiclass_classifier(data, tmp_path):
    x, _, target = data["train"]
    labels = np.digitize(target, np.quantile(target, [1 / 3, 2 / 3])).astype("int32")
    est = estimator.BoostedTreesClassifier(
        columns(), n_batches_per_layer=1, n_classes=3, model_dir=str(tmp_path), n_trees=10,
        max_depth=3, learning_rate=0.3,
    )  # fmt: skip
    est.train(train_input(x, labels, batch=len(x)))
    x_test, _, target_test = data["test"]
    labels_test = np.digitize(target_test, np.quantile(target, [1 / 3, 2 / 3])).astype("int32")
    assert est.evaluate(eval_input(x_test, labels_test))["accuracy"] >= 0.85


def test_weight_column_and_label_vocabulary(data, tmp_path):
    x, y, _ = data["train"]
    # Flip half the labels and give those examples weight 0: the model learns the clean ones.
    rng = np.random.RandomState(3)
    flipped = rng.rand(len(y)) < 0.5
    noisy = np.where(flipped, 1 - y, y)
    words = np.array(["no", "yes"])[noisy]
    feats = {f"x{i}": x[:, i] for i in range(4)}
    feats["w"] = np.where(flipped, 0.0, 1.0).astype("float32")
    est = estimator.BoostedTreesClassifier(
        columns(), n_batches_per_layer=1, weight_column="w", label_vocabulary=["no", "yes"],
        model_dir=str(tmp_path), n_trees=10, max_depth=3, learning_rate=0.3,
    )  # fmt: skip
    est.train(lambda: tf.data.Dataset.from_tensor_slices((feats, words)).batch(len(x)).repeat())
    x_test, y_test, _ = data["test"]
    predictions = list(est.predict(predict_input(x_test)))
    classes = np.array([p["classes"][0].decode() for p in predictions])
    assert np.mean(classes == np.array(["no", "yes"])[y_test]) >= 0.9


def test_indicator_columns_split_per_category(tmp_path):
    rng = np.random.RandomState(0)
    color = rng.randint(0, 4, 800)
    y = (color == 2).astype("int32")
    column = tf.feature_column.indicator_column(
        tf.feature_column.categorical_column_with_identity("color", 4)
    )
    est = estimator.BoostedTreesClassifier(
        [column], n_batches_per_layer=1, model_dir=str(tmp_path), n_trees=3, max_depth=2,
        learning_rate=0.5,
    )  # fmt: skip
    dataset = lambda: tf.data.Dataset.from_tensor_slices(({"color": color}, y)).batch(800)  # noqa: E731
    est.train(lambda: dataset().repeat())
    assert est.evaluate(dataset)["accuracy"] == 1.0
    assert list(est.experimental_feature_importances()) == ["color"]


@pytest.mark.parametrize(
    "pruning_mode",
    [pytest.param("pre", marks=pytest.mark.slow), "post"],  # one in the fast tier
)
def test_pruning_removes_splits_of_too_little_gain(data, tmp_path, pruning_mode):
    x, _, target = data["train"]
    y = (target > np.median(target)).astype("int32")  # an XOR's first split has no gain

    def splits(**kwargs):
        est = estimator.BoostedTreesClassifier(
            columns(), n_batches_per_layer=1, model_dir=str(tmp_path / str(len(kwargs))),
            n_trees=3, max_depth=4, learning_rate=0.3, **kwargs,
        )  # fmt: skip
        est.train(train_input(x, y, batch=len(x)))
        return int((est.get_variable_value("boosted_trees/ensemble/node_feature") >= 0).sum())

    unpruned = splits()
    pruned = splits(pruning_mode=pruning_mode, tree_complexity=0.01)
    assert 0 < pruned < unpruned
