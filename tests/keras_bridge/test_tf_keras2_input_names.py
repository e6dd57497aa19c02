"""model_to_estimator takes the feature keys 2.15-era input_fns used: tf.keras 2 named a
Sequential's input `<first layer name>_input` and unnamed inputs `input_1`, `input_2`, ...,
where Keras 3 says `input_layer`; and a single-input model takes one unnamed tensor."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from keras_estimator import model_to_estimator
from keras_estimator.keras_bridge.model_to_estimator import FormattedKeyError

RNG = np.random.RandomState(0)
X = RNG.rand(32, 4).astype(np.float32)
Y = (X.sum(1) > 2).astype(np.int64)


def compiled(model):
    model.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return model


def input_fn(features, labels=None):
    def fn():
        return tf.data.Dataset.from_tensor_slices(
            features if labels is None else (features, labels)
        ).batch(8)

    return fn


def test_a_sequential_takes_its_tf_keras_2_input_name(tmp_path):
    model = compiled(keras.Sequential([
        keras.layers.Dense(8, activation="relu", input_shape=(4,), name="hidden"),
        keras.layers.Dense(2, name="logits"),
    ]))  # fmt: skip
    keras_values = model.predict(X, verbose=0)
    est = model_to_estimator(keras_model=model, model_dir=str(tmp_path))
    est.train(input_fn({"hidden_input": X}, Y), steps=2)
    assert est.evaluate(input_fn({"hidden_input": X}, Y))["global_step"] == 2
    predicted = np.stack([p["logits"] for p in est.predict(input_fn({"hidden_input": X}))])
    assert predicted.shape == keras_values.shape and not np.allclose(predicted, keras_values)
    # The same from a single unnamed tensor, as 2.15 took it.
    unnamed = np.stack([p["logits"] for p in est.predict(input_fn(X))])
    np.testing.assert_allclose(unnamed, predicted, rtol=1e-6)
    with pytest.raises(FormattedKeyError, match="Expected keys: {'input_layer"):
        est.train(input_fn({"x": X}, Y), steps=1)


def test_unnamed_functional_inputs_take_input_1_input_2(tmp_path):
    first, second = keras.Input((4,)), keras.Input((4,))
    logits = keras.layers.Dense(2)(keras.layers.Concatenate()([first, second * 2.0]))
    model = compiled(keras.Model([first, second], logits))
    # Keras 3 calls them input_layer, input_layer_1, ...; tf.keras 2 input_1, input_2, ...
    names = [layer.name for layer in model.layers if isinstance(layer, keras.layers.InputLayer)]
    assert all(name.startswith("input_layer") for name in names)
    tf_keras2 = [f"input_{int(n.rpartition('_')[2]) + 1 if n[-1].isdigit() else 1}"
                 for n in names]  # fmt: skip
    est = model_to_estimator(keras_model=model, model_dir=str(tmp_path))
    by_new_names = {names[0]: X, names[1]: X[::-1].copy()}
    by_old_names = {tf_keras2[0]: X, tf_keras2[1]: X[::-1].copy()}
    est.train(input_fn(by_old_names, Y), steps=1)
    old = est.evaluate(input_fn(by_old_names, Y))
    new = est.evaluate(input_fn(by_new_names, Y))
    np.testing.assert_allclose(old["loss"], new["loss"], rtol=1e-6)
    swapped = {tf_keras2[0]: X[::-1].copy(), tf_keras2[1]: X}  # order follows the names
    assert not np.isclose(est.evaluate(input_fn(swapped, Y))["loss"], old["loss"])
