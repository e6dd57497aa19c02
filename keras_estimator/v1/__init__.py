"""`keras_estimator.v1`: the `tf.compat.v1.estimator` namespace of tf.estimator 2.15.

Everything `keras_estimator` offers, except the names 2.15 gave v1 classes of their own:
`Estimator`, the v1 canned estimators (`DNNClassifier`, `LinearClassifier`,
`DNNLinearCombinedClassifier`, `BaselineClassifier`, their Regressor and Estimator
variants: loss summed over the batch, `tf.compat.v1.train` optimizers, 2.15's v1 slot
names) and `classifier_parse_example_spec` / `regressor_parse_example_spec`.
`install()` makes `tf.compat.v1.estimator` this module.

Example:
    >>> import tensorflow.compat.v1 as tf
    >>> from keras_estimator import v1 as estimator      # was: estimator = tf.estimator
    >>> columns = [tf.feature_column.numeric_column("x")]
    >>> est = estimator.DNNClassifier([16, 16], columns, n_classes=3)
"""

from __future__ import annotations

import importlib
from typing import Any

import keras_estimator as _root

_CANNED_V1 = (
    "BaselineClassifier", "BaselineEstimator", "BaselineRegressor", "DNNClassifier", "DNNEstimator",
    "DNNLinearCombinedClassifier", "DNNLinearCombinedEstimator", "DNNLinearCombinedRegressor",
    "DNNRegressor", "LinearClassifier", "LinearEstimator", "LinearRegressor",
    "classifier_parse_example_spec", "regressor_parse_example_spec",
)  # fmt: skip
# The v1-specific names -> the module that defines them.
_V1_LOCATIONS: dict[str, str] = {
    "Estimator": "keras_estimator.estimator.estimator_v1",
    **dict.fromkeys(_CANNED_V1, "keras_estimator.canned.v1"),
}
__all__ = sorted({*_root.__all__, *_V1_LOCATIONS} - {"canned", "install", "uninstall", "v1"})


def __getattr__(name: str) -> Any:
    if name in _V1_LOCATIONS:
        value = getattr(importlib.import_module(_V1_LOCATIONS[name]), name)
    elif name in __all__:
        value = getattr(_root, name)
    else:
        raise AttributeError(
            f"module 'keras_estimator.v1' (tf.compat.v1.estimator) has no attribute {name!r}. "
            f"Expected one of tf.estimator 2.15's v1 names: {', '.join(__all__)}."
        )
    globals()[name] = value  # later lookups skip __getattr__
    return value


def __dir__() -> list[str]:
    return list(__all__)
