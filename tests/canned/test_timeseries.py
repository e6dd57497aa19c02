"""tf.estimator 2.15's time-series estimators on keras_estimator (canned/timeseries): an
autoregressive model learns a sine series (2.15's TimeSeriesRegressor on the same data, seed
and steps: evaluation loss 1.7e-05, 20-step forecast error 1.8e-05, as this reaches), the
LSTMAutoRegressor trains, evaluates and predicts, and the exported SavedModel filters and
predicts through saved_model_utils as Estimator.predict does."""

import functools

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as estimator
from keras_estimator.canned.timeseries import ar_model, estimators, saved_model_utils

N, PAST, FUTURE = 200, 10, 5
TIMES = np.arange(N)
VALUES = np.sin(2 * np.pi * TIMES / 20).astype(np.float32)


def windows_fn(batch=32):
    starts = np.arange(N - PAST - FUTURE + 1)
    times = np.stack([TIMES[s : s + PAST + FUTURE] for s in starts]).astype(np.int64)
    values = np.stack([VALUES[s : s + PAST + FUTURE] for s in starts])[..., None]
    data = {"times": times, "values": values}
    return lambda: (
        tf.data.Dataset.from_tensor_slices(data).shuffle(500, seed=1).repeat().batch(batch)
    )


def whole_series_fn():
    return tf.data.Dataset.from_tensors({"times": TIMES[None], "values": VALUES[None, :, None]})


def ar_model_of(loss=ar_model.ARModel.SQUARED_LOSS):
    factory = functools.partial(ar_model.LSTMPredictionModel, num_units=8)
    return ar_model.ARModel(
        periodicities=20, input_window_size=PAST, output_window_size=FUTURE, num_features=1,
        loss=loss, prediction_model_factory=factory,
    )  # fmt: skip


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    model_dir = str(tmp_path_factory.mktemp("ar"))
    config = estimator.RunConfig(tf_random_seed=3)
    regressor = estimators.TimeSeriesRegressor(ar_model_of(), model_dir=model_dir, config=config)
    regressor.train(windows_fn(), steps=300)
    return regressor, regressor.evaluate(whole_series_fn, steps=1)


def test_ar_model_learns_a_sine_and_evaluates_as_2_15(trained):
    _, result = trained
    assert sorted(result) == ["average_loss", "covariance", "global_step", "loss", "mean",
                              "observed", "start_tuple", "times"]  # fmt: skip
    assert result["global_step"] == 300
    # The series' last 190 times, predicted window by window from the 10 before each.
    assert result["mean"].shape == (1, 190, 1) and result["times"].shape == (1, 190)
    np.testing.assert_array_equal(result["times"][0], TIMES[10:])
    np.testing.assert_allclose(result["observed"][0, :, 0], VALUES[10:])
    assert [s.shape for s in result["start_tuple"]] == [(1, 10), (1, 10, 1), (1, 10, 0)]
    mse = np.mean((result["mean"] - result["observed"]) ** 2)
    assert result["loss"] == pytest.approx(mse, rel=1e-3)  # SQUARED_LOSS evaluates unscaled
    assert mse < 2e-4  # 2.15: 1.7e-05


def test_ar_model_predicts_after_the_evaluated_state(trained):
    regressor, result = trained
    times = np.arange(N, N + 20)[None]

    def predict_fn():
        return tf.data.Dataset.from_tensors({"times": times, "start_tuple": result["start_tuple"]})

    (prediction,) = list(regressor.predict(predict_fn))
    assert sorted(prediction) == ["covariance", "mean", "times"]
    assert prediction["mean"].shape == (20, 1)
    expected = np.sin(2 * np.pi * times[0] / 20)
    assert np.mean((prediction["mean"][:, 0] - expected) ** 2) < 2e-3  # 2.15: 1.8e-05
    # Squared loss learns no variance: 1 in model scale, the series' variance in its own.
    np.testing.assert_allclose(prediction["covariance"], VALUES.var(ddof=1), rtol=0.02)


def test_input_statistics_are_the_moments_of_the_training_windows(tmp_path):
    data = {"times": TIMES[None, :15], "values": VALUES[None, :15, None]}
    regressor = estimators.TimeSeriesRegressor(ar_model_of(), model_dir=str(tmp_path))
    regressor.train(lambda: tf.data.Dataset.from_tensors(data), steps=1)
    value = regressor.get_variable_value
    assert value("input_statistics/overall_feature_mean")[0] == pytest.approx(
        VALUES[:15].mean(), abs=1e-6
    )
    assert value("input_statistics/overall_feature_var")[0] == pytest.approx(
        VALUES[:15].var(ddof=1), rel=1e-5
    )
    assert value("input_statistics/start_time") == 0
    assert value("input_statistics/total_observation_count") == 15
    assert value("input_statistics/series_start_mean")[0] == pytest.approx(
        VALUES[:15].mean(), abs=1e-6
    )


def test_exported_model_filters_and_predicts_as_the_estimator(trained, tmp_path):
    regressor, result = trained
    path = regressor.export_saved_model(
        str(tmp_path), regressor.build_raw_serving_input_receiver_fn()
    )
    times = np.arange(N, N + 20)[None]
    (expected,) = list(regressor.predict(lambda: tf.data.Dataset.from_tensors(
        {"times": times, "start_tuple": result["start_tuple"]})))  # fmt: skip
    with tf.Graph().as_default(), tf.compat.v1.Session() as session:
        signatures = tf.compat.v1.saved_model.loader.load(session, ["serve"], path)
        assert {"serving_default", "filter", "cold_start_filter"} <= set(signatures.signature_def)
        state = saved_model_utils.cold_start_filter(
            signatures, session, {"times": TIMES, "values": VALUES}
        )
        from_filter = saved_model_utils.predict_continuation(state, signatures, session, steps=20)
        from_evaluation = saved_model_utils.predict_continuation(
            result, signatures, session, steps=20
        )
        later = saved_model_utils.filter_continuation(
            state, signatures, session, {"times": np.arange(N, N + 5), "values": VALUES[:5]}
        )
        after = saved_model_utils.predict_continuation(later, signatures, session, steps=3)
    np.testing.assert_allclose(from_filter["mean"][0], expected["mean"], atol=1e-5)
    np.testing.assert_allclose(from_evaluation["mean"][0], expected["mean"], atol=1e-5)
    np.testing.assert_array_equal(after["times"], [[N + 5, N + 6, N + 7]])
    with pytest.raises(ValueError, match="exactly one of `steps`"):
        saved_model_utils.predict_continuation(state, signatures, None)


def test_lstm_auto_regressor_trains_evaluates_and_predicts(tmp_path):
    regressor = estimators.LSTMAutoRegressor(
        periodicities=20, input_window_size=PAST, output_window_size=FUTURE, num_units=8,
        model_dir=str(tmp_path), config=estimator.RunConfig(tf_random_seed=3),
    )  # fmt: skip
    regressor.train(windows_fn(), steps=100)
    result = regressor.evaluate(whole_series_fn, steps=1)
    # OneShotPredictionHead reports no state.
    assert "start_tuple" not in result and result["mean"].shape == (1, 190, 1)
    assert np.isfinite(result["loss"]) and result["loss"] == pytest.approx(result["average_loss"])
    state = (TIMES[None, -PAST:], VALUES[None, -PAST:, None], np.zeros((1, PAST, 0), np.float32))
    features = {"times": np.arange(N, N + 7)[None], "values": np.zeros((1, 7, 1), np.float32),
                "start_tuple": state}  # fmt: skip
    (prediction,) = list(regressor.predict(lambda: tf.data.Dataset.from_tensors(features)))
    assert prediction["mean"].shape == (7, 1) and np.all(prediction["covariance"] > 0)


def test_errors_say_what_was_expected(tmp_path):
    with pytest.raises(ValueError, match="SQUARED_LOSS"):
        ar_model.ARModel(20, PAST, FUTURE, 1, loss="absolute")
    regressor = estimators.TimeSeriesRegressor(ar_model_of(), model_dir=str(tmp_path))
    with pytest.raises(ValueError, match="labels"):
        regressor.train(lambda: tf.data.Dataset.from_tensors(({"times": TIMES[None, :15],
                        "values": VALUES[None, :15, None]}, [1.0])), steps=1)  # fmt: skip
    with pytest.raises(ValueError, match="window"):
        regressor.train(lambda: tf.data.Dataset.from_tensors(
            {"times": TIMES[None, :12], "values": VALUES[None, :12, None]}), steps=1)  # fmt: skip
