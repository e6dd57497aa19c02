"""2.15's `canned/baseline.py`. The plain names are the v1 estimators, the `V2` names
`tf.estimator`'s."""

from keras_estimator.canned.baseline import BaselineClassifier as BaselineClassifierV2
from keras_estimator.canned.baseline import BaselineEstimator as BaselineEstimatorV2
from keras_estimator.canned.baseline import BaselineRegressor as BaselineRegressorV2
from keras_estimator.canned.v1.baseline import (
    BaselineClassifier,
    BaselineEstimator,
    BaselineRegressor,
)

__all__ = [
    "BaselineClassifier",
    "BaselineClassifierV2",
    "BaselineEstimator",
    "BaselineEstimatorV2",
    "BaselineRegressor",
    "BaselineRegressorV2",
]


def _get_weight_column_key(weight_column: object) -> str | None:
    """The feature key of `weight_column` (a name or a numeric column), or None."""
    if weight_column is None:
        return None
    return weight_column if isinstance(weight_column, str) else weight_column.key  # type: ignore[attr-defined]


_get_weight_column_key_v2 = _get_weight_column_key
