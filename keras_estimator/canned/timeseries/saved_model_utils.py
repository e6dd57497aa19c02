"""Filtering and prediction with an exported time-series SavedModel (2.15's functions).

The SavedModel comes from `TimeSeriesRegressor.export_saved_model` with
`build_raw_serving_input_receiver_fn()`; it is loaded in TF1 style, as 2.15's callers did:

    with tf.Graph().as_default(), tf.compat.v1.Session() as session:
        signatures = tf.compat.v1.saved_model.loader.load(session, ["serve"], export_dir)
        state = saved_model_utils.cold_start_filter(signatures, session, {"times": t, "values": v})
        predictions = saved_model_utils.predict_continuation(state, signatures, session, steps=10)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from keras_estimator.canned.timeseries import feature_keys, head, model_utils

_TIMES = feature_keys.TrainEvalFeatures.TIMES
_VALUES = feature_keys.TrainEvalFeatures.VALUES


def _canonicalize_numpy_data(data: dict, require_single_batch: bool) -> dict:
    """The features as arrays shaped [batch, series length, ...].

    `times` may be a scalar (one example), a [length] vector (one series) or [batch,
    length]; `values` is shaped like `times`, with or without a last feature dimension.

    Raises:
        ValueError: for missing keys, shapes that do not match `times`, or (with
            `require_single_batch`) a batch of more than one series.
    """
    features = {key: np.array(value) for key, value in data.items()}
    if _TIMES not in features or _VALUES not in features:
        raise ValueError(f"{_TIMES} and {_VALUES} are required features.")
    times = features[_TIMES]
    for key, value in features.items():
        if value.shape[: times.ndim] != times.shape:
            raise ValueError(
                "All features must have their shapes prefixed by the shape of the times "
                f"feature. Got shape {value.shape} for feature '{key}', but shape {times.shape} "
                f"for '{_TIMES}'"
            )
    values = features[_VALUES]
    if times.ndim == 0:  # one example
        if values.ndim > 1:
            raise ValueError(
                f"Got an unexpected number of dimensions for the '{_VALUES}' feature: expected "
                f"at most 1 dimension for a single example, got shape {values.shape}."
            )
        if values.ndim == 0:
            values = values[None]
        features = {k: v[None, None, ...] for k, v in features.items()}
        features[_VALUES] = values[None, None, :]
    elif times.ndim == 1:  # one series
        if values.ndim == 1:
            features[_VALUES] = values[:, None]
        elif values.ndim > 2:
            raise ValueError(
                f"Got an unexpected number of dimensions for the '{_VALUES}' feature: expected "
                f"at most 2 dimensions for a single series, got shape {values.shape}."
            )
        features = {k: v[None, ...] for k, v in features.items()}
    elif times.ndim == 2:  # a batch of series
        if values.ndim == 2:
            features[_VALUES] = values[..., None]
        elif values.ndim > 3:
            raise ValueError(
                f"Got an unexpected number of dimensions for the '{_VALUES}' feature: expected "
                f"at most 3 dimensions for a batch of series, got shape {values.shape}."
            )
    else:
        raise ValueError(
            f"Got an unexpected number of dimensions for the '{_TIMES}' feature: expected at "
            f"most 2 (batch, series length), got shape {times.shape}."
        )
    if require_single_batch and features[_TIMES].shape[0] != 1:
        raise ValueError("Got batch input, was expecting unbatched input.")
    return features


def _colate_features_to_feeds_and_fetches(
    signature: Any, features: dict, graph: Any, continue_from: Any = None
) -> tuple[dict, dict]:
    """`(fetches, feed_dict)` for `session.run` of `signature` on `features`, with the
    state of `continue_from` (an evaluation's or filtering's result) fed too."""
    if continue_from is None:
        state = {}
    elif feature_keys.FilteringResults.STATE_TUPLE in continue_from:
        state = head.state_to_dictionary(continue_from[feature_keys.FilteringResults.STATE_TUPLE])
    else:
        state = continue_from
    inputs = {key: graph.as_graph_element(info.name) for key, info in signature.inputs.items()}
    fetches = {key: graph.as_graph_element(info.name) for key, info in signature.outputs.items()}
    feed = {}
    for key, value in list(state.items()) + list(features.items()):
        if key not in inputs:
            if key in state and key not in features:
                continue  # e.g. the times of a filtering result
            raise ValueError(
                f"The signature has no input {key!r}; it takes {sorted(inputs)}. Check the "
                "feature names (and that the SavedModel is the same model)."
            )
        feed[inputs[key]] = value
    if _VALUES in inputs and inputs[_VALUES] not in feed and _TIMES in features:
        # 2.15's receiver defaulted `values` (prediction reads none); a SavedModel signature
        # written by TF 2 has no defaults, so the zeros are fed here.
        tensor = inputs[_VALUES]
        times_shape = np.shape(features[_TIMES])
        shape = [
            times_shape[i] if i < 2 else (dim or 0) for i, dim in enumerate(tensor.shape.as_list())
        ]
        feed[tensor] = np.zeros(shape, dtype=tensor.dtype.as_numpy_dtype)
    return fetches, feed


def predict_continuation(
    continue_from: dict, signatures: Any, session: Any, steps: Any = None, times: Any = None,
    exogenous_features: Any = None,
) -> dict:  # fmt: skip
    """Predicts after an evaluation or filtering result, with the exported model.

    Args:
        continue_from: the result of `Estimator.evaluate` or of a filtering function here.
        signatures: the `MetaGraphDef` `tf.compat.v1.saved_model.loader.load` returned.
        session: the session it was loaded into.
        steps: how many times to predict after `continue_from` (or give `times`).
        times: the [batch, window] (or [window]) times to predict.
        exogenous_features: exogenous features for those times, [batch, window, ...].

    Returns:
        The model's predictions (`mean`, `covariance`, ...) and their `times`.
    """
    predict_times = model_utils.canonicalize_times_or_steps_from_output(
        times=times, steps=steps, previous_model_output=continue_from
    )
    features = {feature_keys.PredictionFeatures.TIMES: predict_times}
    features.update(exogenous_features or {})
    signature = signatures.signature_def[feature_keys.SavedModelLabels.PREDICT]
    fetches, feed = _colate_features_to_feeds_and_fetches(
        signature, features, session.graph, continue_from=continue_from
    )
    output = session.run(fetches, feed_dict=feed)
    output[feature_keys.PredictionResults.TIMES] = predict_times
    return output


def cold_start_filter(signatures: Any, session: Any, features: dict) -> dict:
    """Filters `features` (`times`, `values`, exogenous) from the model's start state.

    Returns:
        The state after the observations (`model_state_NN`) and their `times`, ready for
        `predict_continuation` or `filter_continuation`.
    """
    signature = signatures.signature_def[feature_keys.SavedModelLabels.COLD_START_FILTER]
    features = _canonicalize_numpy_data(features, require_single_batch=False)
    fetches, feed = _colate_features_to_feeds_and_fetches(signature, features, session.graph)
    output = session.run(fetches, feed_dict=feed)
    output[feature_keys.FilteringResults.TIMES] = features[_TIMES]
    return output


def filter_continuation(continue_from: dict, signatures: Any, session: Any, features: dict) -> dict:
    """Filters `features` from the state of `continue_from` (an evaluation or filtering).

    Returns:
        The state after the observations and their `times`.
    """
    signature = signatures.signature_def[feature_keys.SavedModelLabels.FILTER]
    features = _canonicalize_numpy_data(features, require_single_batch=False)
    fetches, feed = _colate_features_to_feeds_and_fetches(
        signature, features, session.graph, continue_from=continue_from
    )
    output = session.run(fetches, feed_dict=feed)
    output[feature_keys.FilteringResults.TIMES] = features[_TIMES]
    return output
