"""The end of the Keras road (issue 29): `keras_model.export(path)` reloads as a Keras layer
(`keras.layers.TFSMLayer`, the `serve` endpoint) and keeps the estimator's signatures; the
`save("x.keras")` refusal names real paths; `fit()` keeps the global step out of its bar and
gives it as ints in History."""

import keras
import numpy as np
import pytest
import tensorflow as tf
from helpers import dataset_input_fn, make_estimator


@pytest.fixture
def trained(tmp_path, toy_data):
    x, y = toy_data
    est = make_estimator(str(tmp_path / "model"))
    est.train(dataset_input_fn(x, y, 16, repeat=True), steps=5)
    return est, x, y


def test_export_reloads_as_a_keras_layer_and_keeps_the_signatures(tmp_path, trained):
    est, x, _ = trained
    model = est.keras_model
    expected = model.predict({"x": x[:4]}, verbose=0)["probabilities"]
    path = str(tmp_path / "served")
    model.export(path)

    layer = keras.layers.TFSMLayer(path)  # call_endpoint="serve"
    got = layer({"x": tf.constant(x[:4])})
    np.testing.assert_allclose(got["probabilities"].numpy(), expected, rtol=1e-5, atol=1e-6)
    inputs = keras.Input((8,), name="x")
    wrapped = keras.Model(inputs, layer({"x": inputs})["classes"])  # inside a Keras model
    np.testing.assert_array_equal(wrapped.predict(x[:4], verbose=0), np.argmax(expected, 1))

    served = tf.saved_model.load(path)
    assert "serving_default" in served.signatures
    by_signature = served.signatures["serving_default"](x=tf.constant(x[:4]))
    np.testing.assert_allclose(by_signature["probabilities"].numpy(), expected, rtol=1e-5,
                               atol=1e-6)  # fmt: skip


def test_save_to_a_keras_file_names_a_real_path_for_each_option(tmp_path, trained):
    est, _, _ = trained
    target = str(tmp_path / "m.keras")
    with pytest.raises(NotImplementedError) as excinfo:
        est.keras_model.save(target)
    message = str(excinfo.value)
    stem = target[: -len(".keras")]
    assert f"keras_model.export({stem!r}) (a SavedModel folder)" in message
    assert f"keras_model.save_weights({stem + '.weights.h5'!r})" in message
    assert "est.latest_checkpoint()" in message and f"export({target!r})" not in message
    est.keras_model.save_weights(stem + ".weights.h5")  # the suggested paths work
    est.keras_model.export(stem)
    keras.layers.TFSMLayer(stem)


def test_fit_shows_no_global_step_in_its_bar_and_ints_in_history(trained, capsys):
    est, x, y = trained
    dataset = tf.data.Dataset.from_tensor_slices(({"x": x}, y)).batch(16).repeat()
    history = est.keras_model.fit(dataset, steps_per_epoch=3, epochs=2, verbose=1)
    assert history.history["global_step"] == [8, 11]
    assert all(type(step) is int for step in history.history["global_step"])
    out = capsys.readouterr().out
    assert "loss:" in out and "global_step" not in out, out[-2000:]
