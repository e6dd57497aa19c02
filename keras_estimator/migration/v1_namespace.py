"""The one-import recipe's trap: under `import tensorflow.compat.v1 as tf`, `tf.estimator`
is `tf.compat.v1.estimator`, whose canned estimators are 2.15's v1 classes (loss summed
over the batch, `tf.compat.v1.train` optimizers). `install()` / `run` map it to
`keras_estimator.v1`; code edited to import its estimator must do the same, or its canned
estimators train differently (the v2 classes average the loss) without a word."""

from __future__ import annotations

# The names tf.compat.v1.estimator gave classes of its own, but Estimator (whose v1 class
# differs in no training result): keras_estimator.v1's (tests/migration keeps them equal).
V1_CANNED = frozenset({
    "BaselineClassifier", "BaselineEstimator", "BaselineRegressor", "DNNClassifier",
    "DNNEstimator", "DNNLinearCombinedClassifier", "DNNLinearCombinedEstimator",
    "DNNLinearCombinedRegressor", "DNNRegressor", "LinearClassifier", "LinearEstimator",
    "LinearRegressor", "classifier_parse_example_spec", "regressor_parse_example_spec",
})  # fmt: skip
V1_NOTE = (
    "tf.estimator is tf.compat.v1.estimator here: 2.15's v1 class (loss summed over the "
    "batch, tf.compat.v1.train optimizers), keras_estimator.v1's under install() / run"
)
V1_FIX = (
    "where the code names its estimator module itself, `from keras_estimator import v1 as "
    "estimator` (`import keras_estimator` gives the v2 classes: loss averaged, other training)"
)


def is_v1_canned(api: str) -> bool:
    """Whether `api` (canonical `tf.estimator.X...`) names a class v1 has its own of."""
    parts = api.split(".")
    return len(parts) >= 3 and parts[:2] == ["tf", "estimator"] and parts[2] in V1_CANNED
