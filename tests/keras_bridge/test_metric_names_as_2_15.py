"""model_to_estimator's evaluation keys are 2.15's: metrics named as written in compile()
with TF2 behaviour, and tf.keras 2's graph-mode names (`mae` -> `mean_absolute_error`,
`accuracy` -> `acc`, prefixed by the output for several outputs) in a script that called
`tf.compat.v1.disable_v2_behavior()` (checked against tensorflow-estimator 2.15.0)."""

import keras
import numpy as np
import tensorflow as tf

import keras_estimator as estimator

RNG = np.random.RandomState(0)
X = RNG.rand(16, 3).astype(np.float32)
Y = (X.sum(1) > 1.5).astype(np.float32)[:, None]


def evaluation_keys(tmp_path, metrics, two_outputs=False):
    inputs = keras.Input((3,), name="x")
    if two_outputs:
        outputs = [keras.layers.Dense(1, name="a")(inputs), keras.layers.Dense(1, name="b")(inputs)]
    else:
        outputs = keras.layers.Dense(1, activation="sigmoid", name="d")(inputs)
    model = keras.Model(inputs, outputs)
    model.compile("sgd", "mse", metrics=metrics)
    est = tf.keras.estimator.model_to_estimator(keras_model=model, model_dir=str(tmp_path))
    labels = {"a": Y, "b": Y} if two_outputs else Y
    result = est.evaluate(lambda: tf.data.Dataset.from_tensors((X, labels)), steps=1)
    return sorted(set(result) - {"global_step", "loss"})


def test_with_tf2_behaviour_metrics_keep_the_names_written_in_compile(installed, tmp_path):
    assert evaluation_keys(tmp_path, ["mae", "mse", "accuracy", "acc"]) == [
        "acc", "accuracy", "mae", "mse",
    ]  # fmt: skip


def test_after_disable_v2_behavior_metrics_get_tf_keras_2_graph_mode_names(installed, tmp_path):
    tf.compat.v1.disable_v2_behavior()  # install()'s switch: eager execution stays on
    assert evaluation_keys(tmp_path / "1", ["mae", "mse", "mape", "accuracy"]) == [
        "acc", "mean_absolute_error", "mean_absolute_percentage_error", "mean_squared_error",
    ]  # fmt: skip
    # Metric objects and other strings keep their names, as in 2.15.
    keys = evaluation_keys(tmp_path / "2", [keras.metrics.AUC(), "binary_accuracy", "msle"])
    assert keys == ["auc", "binary_accuracy", "mean_squared_logarithmic_error"]
    keys = evaluation_keys(tmp_path / "3", {"a": ["mae"], "b": ["acc"]}, two_outputs=True)
    assert keys == ["a_mean_absolute_error", "b_acc"]
    # metric_names_map is keyed by those names, as 2.15's was.
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    model.compile("sgd", "mse", metrics=["mae"])
    est = tf.keras.estimator.model_to_estimator(
        keras_model=model, model_dir=str(tmp_path / "4"),
        metric_names_map={"mean_absolute_error": "my_mae"},
    )  # fmt: skip
    result = est.evaluate(lambda: tf.data.Dataset.from_tensors((X, Y)), steps=1)
    assert "my_mae" in result


def test_uninstall_forgets_the_graph_mode_request(tmp_path):
    estimator.install()
    tf.compat.v1.disable_eager_execution()
    estimator.uninstall()
    estimator.install()
    try:
        assert evaluation_keys(tmp_path, ["mae"]) == ["mae"]
    finally:
        estimator.uninstall()
