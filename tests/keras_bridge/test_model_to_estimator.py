"""model_to_estimator: compiled Keras 3 models (Sequential, functional, subclassed; one or
several inputs and outputs) as Estimators that train, evaluate, predict and export."""

import os

import keras
import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as estimator
from keras_estimator import export, model_to_estimator

RNG = np.random.RandomState(0)
X = RNG.rand(64, 4).astype(np.float32)
Z = RNG.rand(64, 2).astype(np.float32)
Y = (X.sum(1) > 2).astype(np.int64)
R = (X[:, :1] * 2 + Z[:, :1]).astype(np.float32)


def _compile(model, **kwargs):
    model.compile(
        keras.optimizers.Adam(0.05),
        keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
        **kwargs,
    )
    return model


def _sequential():
    return _compile(
        keras.Sequential(
            [keras.Input((4,), name="x"), keras.layers.Dense(8, "relu"), keras.layers.Dense(2)]
        )
    )


@keras.saving.register_keras_serializable("keras_estimator_tests")
class TwoLayers(keras.Model):
    def __init__(self, units=8, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.hidden = keras.layers.Dense(units, activation="relu")
        self.logits = keras.layers.Dense(2)

    def call(self, inputs):
        return self.logits(self.hidden(inputs))

    def get_config(self):
        return {"units": self.units, **super().get_config()}


def _input_fn(features, labels=None, repeat=False):
    def input_fn():
        ds = tf.data.Dataset.from_tensor_slices(
            features if labels is None else (features, labels)
        ).batch(32)
        return ds.repeat() if repeat else ds

    return input_fn


def _check_roundtrip(tmp_path, model, features, labels, keras_x, serving_spec):
    """Estimator evaluate == Keras evaluate (warm start), training moves, predict ==
    Keras predict after loading the trained weights; the export serves the same values."""
    keras_before = model.evaluate(keras_x, labels, verbose=0, return_dict=True)
    est = model_to_estimator(keras_model=model, model_dir=str(tmp_path / "est"))
    before = est.evaluate(_input_fn(features, labels))
    np.testing.assert_allclose(before["loss"], keras_before["loss"], rtol=1e-5)
    np.testing.assert_allclose(before["accuracy"], keras_before["accuracy"], rtol=1e-5)
    est.train(_input_fn(features, labels, repeat=True), steps=20)
    after = est.evaluate(_input_fn(features, labels))
    assert after["global_step"] == 20 and after["loss"] < before["loss"]
    predictions = list(est.predict(_input_fn(features)))
    (key,) = predictions[0]
    values = np.stack([p[key] for p in predictions])
    path = est.export_saved_model(
        str(tmp_path / "export"), export.build_raw_serving_input_receiver_fn(serving_spec)
    ).decode()
    served = tf.saved_model.load(path).signatures["serving_default"](
        **{k: tf.constant(v) for k, v in features.items()}
    )
    np.testing.assert_allclose(served[key].numpy(), values, rtol=1e-5, atol=1e-6)
    return est, key, values


def test_sequential(tmp_path):
    model = _sequential()
    model.fit(X, Y, epochs=1, verbose=0)
    _, key, values = _check_roundtrip(
        tmp_path, model, {"x": X}, Y, X, {"x": tf.TensorSpec([None, 4])}
    )
    assert key == model.layers[-1].name
    assert model.optimizer.iterations.numpy() == 2  # the Estimator never trains keras_model
    assert not np.allclose(values, model.predict(X, verbose=0))


def test_functional_several_inputs_and_outputs(tmp_path):
    x_in, z_in = keras.Input((4,), name="x"), keras.Input((2,), name="z")
    hidden = keras.layers.Dense(8, "relu")(keras.layers.Concatenate()([x_in, z_in]))
    model = keras.Model(
        [x_in, z_in],
        [keras.layers.Dense(2, name="label")(hidden), keras.layers.Dense(1, name="value")(hidden)],
    )
    model.compile(
        keras.optimizers.Adam(0.05),
        [keras.losses.SparseCategoricalCrossentropy(from_logits=True), "mse"],
        metrics=[["accuracy"], ["mae"]],
    )
    keras_before = model.evaluate([X, Z], [Y, R], verbose=0, return_dict=True)
    est = model_to_estimator(
        keras_model=model,
        model_dir=str(tmp_path),
        metric_names_map={"label_accuracy": "acc", "value_mae": "mae"},
        export_outputs={"value": export.RegressionOutput},
    )
    features, labels = {"x": X, "z": Z}, {"label": Y, "value": R}
    before = est.evaluate(_input_fn(features, labels))
    np.testing.assert_allclose(before["loss"], keras_before["loss"], rtol=1e-5)
    np.testing.assert_allclose(before["acc"], keras_before["label_accuracy"], rtol=1e-5)
    np.testing.assert_allclose(before["mae"], keras_before["value_mae"], rtol=1e-5)
    est.train(_input_fn(features, labels, repeat=True), steps=20)
    assert est.evaluate(_input_fn(features, labels))["loss"] < before["loss"]
    first = next(est.predict(_input_fn(features)))
    assert sorted(first) == ["label", "value"]
    with pytest.raises(KeyError, match="Missed keys: {'z'}"):
        est.train(_input_fn({"x": X}, labels), steps=1)
    with pytest.raises(ValueError, match="metric_names_map"):
        model_to_estimator(keras_model=model, metric_names_map={"label_accuracy": "a"}).evaluate(
            _input_fn(features, labels)
        )


def test_functional_dict_inputs_sample_weights_and_a_list_of_labels(tmp_path):
    inputs = {"x": keras.Input((4,), name="x"), "z": keras.Input((2,), name="z")}
    hidden = keras.layers.Concatenate()([inputs["x"], inputs["z"]])
    model = _compile(keras.Model(inputs, keras.layers.Dense(2, name="logits")(hidden)))
    est = model_to_estimator(keras_model=model, model_dir=str(tmp_path))
    weights = np.where(Y == 1, 2.0, 0.5).astype(np.float32)
    features = {"features": {"x": X, "z": Z}, "sample_weights": weights}
    weighted = est.evaluate(_input_fn(features, Y))
    keras_weighted = model.evaluate(
        {"x": X, "z": Z}, Y, sample_weight=weights, verbose=0, return_dict=True
    )
    np.testing.assert_allclose(weighted["loss"], keras_weighted["loss"], rtol=1e-5)
    est.train(_input_fn({"x": X, "z": Z, "unused": Y}, Y, repeat=True), steps=5)


def test_subclassed(tmp_path):
    model = _compile(TwoLayers())
    model.fit(X, Y, epochs=1, verbose=0)
    # 2.15's rule for a subclassed model: dict features are taken in key order.
    _, key, _ = _check_roundtrip(
        tmp_path, model, {"input_1": X}, Y, X, {"input_1": tf.TensorSpec([None, 4])}
    )
    assert key == "output_1"


def test_keras_model_path_and_tf_keras_after_install(tmp_path):
    model = _sequential()
    path = str(tmp_path / "model.keras")
    model.save(path)
    est = model_to_estimator(keras_model_path=path, model_dir=str(tmp_path / "a"))
    expected = model.evaluate(X, Y, verbose=0, return_dict=True)["loss"]
    np.testing.assert_allclose(est.evaluate(_input_fn({"x": X}, Y))["loss"], expected, rtol=1e-5)
    assert os.path.exists(tmp_path / "a" / "keras" / "keras_model.ckpt.index")

    assert not hasattr(tf.keras, "estimator")
    estimator.install()
    try:
        converted = tf.keras.estimator.model_to_estimator(model, model_dir=str(tmp_path / "b"))
        assert isinstance(converted, estimator.Estimator)
        assert tf.compat.v1.keras.estimator.model_to_estimator is model_to_estimator
        from tensorflow_estimator.python.estimator import keras_lib

        assert keras_lib.model_to_estimator is model_to_estimator
    finally:
        estimator.uninstall()
    assert not hasattr(tf.keras, "estimator")


def test_errors_say_what_2_15_said():
    with pytest.raises(ValueError, match="Either `keras_model` or `keras_model_path`"):
        model_to_estimator()
    with pytest.raises(ValueError, match="not both"):
        model_to_estimator(keras_model=_sequential(), keras_model_path="m.keras")
    with pytest.raises(ValueError, match="has not been compiled yet"):
        model_to_estimator(keras_model=keras.Sequential([keras.layers.Dense(1)]))
    with pytest.raises(ValueError, match='one of "checkpoint" or "saver"'):
        model_to_estimator(keras_model=_sequential(), checkpoint_format="h5")
