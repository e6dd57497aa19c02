"""Feature importances rank the informative columns first, under their column names;
directional feature contributions add up to each prediction (tf.estimator 2.8's contract)."""

import numpy as np
import pytest
from bt_data import predict_input

import keras_estimator as estimator


@pytest.mark.parametrize("model", ["classifier", "regressor"])
def test_importances_rank_informative_columns_above_noise(model, request):
    est = request.getfixturevalue(model)
    importances = est.experimental_feature_importances()
    assert set(importances) == {"x0", "x1_bucketized", "x2", "x3"}
    assert set(list(importances)[:2]) == {"x0", "x1_bucketized"}
    noise = max(importances["x2"], importances["x3"])
    assert min(importances["x0"], importances["x1_bucketized"]) > 3 * noise
    values = list(importances.values())
    assert values == sorted(values, key=abs, reverse=True)


def test_normalized_importances_sum_to_one(classifier):
    importances = classifier.experimental_feature_importances(normalize=True)
    assert sum(importances.values()) == pytest.approx(1.0)
    assert all(value >= 0 for value in importances.values())


def test_importances_before_training_say_to_train(tmp_path):
    from bt_data import columns

    est = estimator.BoostedTreesClassifier(columns(), 1, model_dir=str(tmp_path))
    with pytest.raises(ValueError, match="Call train"):
        est.experimental_feature_importances()


def test_classifier_bias_plus_contributions_is_the_probability(classifier, data):
    x, y, _ = data["test"]
    explained = list(classifier.experimental_predict_with_explanations(predict_input(x[:20])))
    plain = list(classifier.predict(predict_input(x[:20])))
    bias = {p["bias"] for p in explained}
    assert len(bias) == 1  # the prior probability, the same for every example
    assert bias.pop() == pytest.approx(np.mean(data["train"][1]), abs=0.03)
    for p, q in zip(explained, plain):
        assert set(p["dfc"]) == {"x0", "x1_bucketized", "x2", "x3"}
        assert p["bias"] + sum(p["dfc"].values()) == pytest.approx(p["probabilities"][1], abs=1e-5)
        np.testing.assert_allclose(p["probabilities"], q["probabilities"], rtol=1e-6)
        contributions = list(p["dfc"].values())
        assert contributions == sorted(contributions, key=abs, reverse=True)


def test_regressor_bias_plus_contributions_is_the_prediction(regressor, data):
    x, _, target = data["test"]
    explained = list(regressor.experimental_predict_with_explanations(
        predict_input(x[:20]), predict_keys=["predictions"]))  # fmt: skip
    assert explained[0]["bias"] == pytest.approx(np.mean(data["train"][2]), abs=0.05)
    for p in explained:
        assert set(p) == {"predictions", "bias", "dfc"}
        assert p["bias"] + sum(p["dfc"].values()) == pytest.approx(p["predictions"][0], abs=1e-4)


def test_explanations_need_center_bias(data, tmp_path):
    from bt_data import columns, train_input

    x, y, _ = data["train"]
    est = estimator.BoostedTreesClassifier(columns(), 1, model_dir=str(tmp_path), n_trees=1,
                                           max_depth=1)  # fmt: skip
    est.train(train_input(x, y, batch=len(x)))
    with pytest.raises(ValueError, match="center_bias must be enabled"):
        next(est.experimental_predict_with_explanations(predict_input(x)))
