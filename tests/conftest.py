"""Test setup: quiet TensorFlow, the TensorFlow Keras backend, two logical CPUs."""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import tensorflow as tf  # noqa: E402

_cpus = tf.config.list_physical_devices("CPU")
try:
    tf.config.set_logical_device_configuration(
        _cpus[0], [tf.config.LogicalDeviceConfiguration()] * 2
    )
except RuntimeError:  # already initialised by an earlier import
    pass

import keras_estimator  # noqa: E402,F401


@pytest.fixture
def digits():
    """(x_train, y_train, x_test, y_test) of the bundled digits data."""
    from keras_estimator.demo import load_digits

    return load_digits()


@pytest.fixture
def toy_data():
    """A small separable 3-class problem: x [256, 8] float32, y int64."""
    rng = np.random.RandomState(0)
    x = rng.randn(256, 8).astype(np.float32)
    y = np.argmax(x[:, :3], axis=1).astype(np.int64)
    return x, y


@pytest.fixture
def installed():
    """keras_estimator.install() for the test, uninstalled after it."""
    keras_estimator.install()
    try:
        yield
    finally:
        keras_estimator.uninstall()
