"""2.15's `canned/parsing_utils.py`: parse specs for the canned estimators' tf.Examples.
The plain names are the v1 functions, the `_v2` names `tf.estimator`'s."""

from typing import Any

import tensorflow as tf

from keras_estimator.canned.parsing_specs import (
    classifier_parse_example_spec as classifier_parse_example_spec_v2,
)
from keras_estimator.canned.parsing_specs import (
    regressor_parse_example_spec as regressor_parse_example_spec_v2,
)
from keras_estimator.canned.v1.parsing_specs import (
    classifier_parse_example_spec,
    regressor_parse_example_spec,
)

__all__ = [
    "classifier_parse_example_spec",
    "classifier_parse_example_spec_v2",
    "regressor_parse_example_spec",
    "regressor_parse_example_spec_v2",
]


def _add_label_and_weight_to_parsing_spec(
    parsing_spec: dict, label_key: str, label_spec: Any, weight_column: Any = None
) -> dict:
    """`parsing_spec` plus the label's spec and the weight column's (a copy)."""
    if label_key in parsing_spec:
        raise ValueError(
            f"label should not be used as feature. label_key: {label_key}, features: "
            f"{parsing_spec.keys()}"
        )
    spec = dict(parsing_spec)
    spec[label_key] = label_spec
    if weight_column is not None:
        if isinstance(weight_column, str):
            weight_column = tf.feature_column.numeric_column(weight_column)
        spec.update(tf.feature_column.make_parse_example_spec([weight_column]))
    return spec
