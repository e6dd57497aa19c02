"""Fixtures of the drop-in tests."""

import pytest

import keras_estimator as estimator


@pytest.fixture
def installed():
    """keras_estimator.install() for the test, uninstalled after it."""
    estimator.install()
    try:
        yield
    finally:
        estimator.uninstall()
