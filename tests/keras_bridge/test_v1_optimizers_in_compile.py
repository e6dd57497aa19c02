"""Under install(), Keras 3's `compile()` takes a `tf.compat.v1.train` optimizer, as tf.keras
2 did (2.15-era model_to_estimator code compiled with `tf.train.RMSPropOptimizer(...)`): it
becomes the Keras 3 optimizer with the same settings, and the Estimator trains with it."""

import keras
import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as estimator

v1 = tf.compat.v1
RNG = np.random.RandomState(0)
X = RNG.rand(32, 3).astype(np.float32)
Y = (X @ np.array([[1.0], [-2.0], [0.5]], np.float32)).astype(np.float32)


def regression_model():
    return keras.Sequential([keras.Input((3,), name="x"), keras.layers.Dense(1, name="y")])


@pytest.mark.parametrize(
    "v1_optimizer, keras_class, expected",
    [
        (lambda: v1.train.RMSPropOptimizer(0.05, decay=0.8, momentum=0.5, epsilon=1e-6,
                                           centered=True),
         keras.optimizers.RMSprop,
         {"learning_rate": 0.05, "rho": 0.8, "momentum": 0.5, "epsilon": 1e-6, "centered": True}),
        (lambda: v1.train.AdamOptimizer(0.02, beta1=0.8, beta2=0.99, epsilon=1e-5),
         keras.optimizers.Adam,
         {"learning_rate": 0.02, "beta_1": 0.8, "beta_2": 0.99, "epsilon": 1e-5}),
        (lambda: v1.train.MomentumOptimizer(0.1, 0.9, use_nesterov=True),
         keras.optimizers.SGD, {"learning_rate": 0.1, "momentum": 0.9, "nesterov": True}),
        (lambda: v1.train.GradientDescentOptimizer(0.3), keras.optimizers.SGD,
         {"learning_rate": 0.3, "momentum": 0.0}),
        (lambda: v1.train.AdagradOptimizer(0.2, initial_accumulator_value=0.5),
         keras.optimizers.Adagrad, {"learning_rate": 0.2, "initial_accumulator_value": 0.5}),
        (lambda: v1.train.FtrlOptimizer(0.1, l1_regularization_strength=0.01),
         keras.optimizers.Ftrl, {"learning_rate": 0.1, "l1_regularization_strength": 0.01}),
    ],
)  # fmt: skip
def test_compile_takes_a_v1_optimizer_with_its_settings(installed, v1_optimizer, keras_class,
                                                         expected):  # fmt: skip
    model = regression_model()
    model.compile(optimizer=v1_optimizer(), loss="mse")
    assert type(model.optimizer) is keras_class
    config = model.optimizer.get_config()
    for key, value in expected.items():
        assert config[key] == pytest.approx(value), key


def test_model_to_estimator_trains_with_the_v1_optimizer_given_to_compile(installed, tmp_path):
    model = regression_model()
    model.compile(optimizer=v1.train.RMSPropOptimizer(learning_rate=0.05), loss="mse")
    est = tf.keras.estimator.model_to_estimator(keras_model=model, model_dir=str(tmp_path))

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).repeat().batch(8)

    before = est.evaluate(input_fn, steps=4)["loss"]
    est.train(input_fn, steps=40)
    after = est.evaluate(input_fn, steps=4)
    assert after["global_step"] == 40 and after["loss"] < before
    # RMSprop's state is in the checkpoint: it trained with RMSprop, not another optimizer.
    names = [name for name, _ in tf.train.list_variables(str(tmp_path))]
    assert any("rms" in name.lower() for name in names), names


def test_a_v1_optimizer_without_a_keras_3_counterpart_is_refused_by_name(installed):
    model = regression_model()
    with pytest.raises(ValueError, match="ProximalAdagradOptimizer.*keras.optimizers"):
        model.compile(optimizer=v1.train.ProximalAdagradOptimizer(0.1), loss="mse")


def test_after_uninstall_compile_is_keras_3_again():
    estimator.install()
    estimator.uninstall()
    with pytest.raises(ValueError, match="Could not interpret optimizer identifier"):
        regression_model().compile(optimizer=v1.train.RMSPropOptimizer(0.1), loss="mse")
