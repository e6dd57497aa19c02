"""split_batch: a dataset element as the model_fn's (features, labels) pair."""

import pytest

from keras_estimator.engine.model import split_batch


def test_an_element_is_split_into_features_and_labels():
    features, labels = {"x": 1}, 2
    assert split_batch((features, labels)) == (features, labels)
    assert split_batch([features, labels]) == (features, labels)  # a pair, as a tuple
    assert split_batch((features,)) == (features, None)  # input_fn without labels
    assert split_batch(features) == (features, None)  # Keras' predict: the features alone


def test_an_element_of_more_than_two_parts_is_refused():
    with pytest.raises(ValueError, match="too many values to unpack"):
        split_batch(({"x": 1}, 2, 3))
