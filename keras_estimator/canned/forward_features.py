"""`forward_features`: an Estimator like another one whose predictions carry features.

tf.contrib.estimator (TF 1.x) had it; tf.estimator 2.x did not. A batch-prediction job keys
its outputs by an input column (an example id), so the Estimator returns that feature with
its predictions, and in the `serving_default` / `predict` signature of its exports.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import tensorflow as tf

from keras_estimator.estimator.estimator import Estimator
from keras_estimator.export.export_outputs import PredictOutput

_SIGNATURES_WITH_FEATURES = ("predict", "serving_default")


def _key_list(keys: str | Iterable[str] | None) -> list[str] | None:
    if keys is None:
        return None
    if isinstance(keys, str):
        return [keys]
    if not isinstance(keys, (list, tuple)):
        raise TypeError(
            "keys should be either a string or a list of strings. Fix: pass the feature "
            f"names to forward. Received: type(keys)={type(keys).__name__}"
        )
    for key in keys:
        if not isinstance(key, str):
            raise TypeError(
                "All items in the given keys list should be a string. Fix: pass feature "
                f"names. Received: item of type {type(key).__name__}"
            )
    return list(keys)


def _forwarded(key: str, feature: Any, sparse_default_values: dict | None) -> tf.Tensor:
    """The feature as the dense tensor the predictions get."""
    if sparse_default_values and key in sparse_default_values:
        if not isinstance(feature, tf.SparseTensor):
            raise ValueError(
                f"Feature ({key}) is expected to be a `SparseTensor`: sparse_default_values "
                f"names it. Fix: drop it from sparse_default_values. Received: "
                f"type={type(feature).__name__}"
            )
        return tf.sparse.to_dense(feature, default_value=sparse_default_values[key])
    if not isinstance(feature, tf.Tensor):
        raise ValueError(
            f"Feature ({key}) should be a Tensor to be forwarded to the predictions. Fix: "
            "filter it out with the `keys` argument of forward_features, or give its default "
            f"in `sparse_default_values`. Received: type of features[{key!r}] is "
            f"{type(feature).__name__}"
        )
    return feature


def forward_features(
    estimator: Estimator,
    keys: str | Iterable[str] | None = None,
    sparse_default_values: dict[str, Any] | None = None,
) -> Estimator:
    """A new Estimator whose predictions (and predict signatures) include features.

    Args:
        estimator: The Estimator to extend; the new one shares its model_dir and config.
        keys: A feature name, a list of them, or None for every feature.
        sparse_default_values: Feature name -> default value, for SparseTensor features to
            forward densified (only those named here).

    Returns:
        A new Estimator.

    Raises:
        TypeError: `keys` is not a string or a list of strings.
        ValueError: (when called) a key is not a feature, is already a prediction key, or
            is a SparseTensor not in `sparse_default_values`; the predictions are not a dict.

    Example:
        >>> est = forward_features(est, "example_id")
        >>> next(est.predict(input_fn))["example_id"]
    """
    wanted = _key_list(keys)
    model_fn = estimator.model_fn  # bound to its params and config

    def new_model_fn(features, labels, mode, config):
        spec = model_fn(features, labels, mode, config)
        predictions = spec.predictions
        if predictions is None:
            return spec
        if not isinstance(predictions, dict):
            raise ValueError(
                "Predictions should be a dict to be able to forward features. Fix: return "
                f"predictions as a dict. Received: type={type(predictions).__name__}"
            )
        names = list(features) if wanted is None else wanted
        for key in names:
            if not isinstance(features, dict) or key not in features:
                raise ValueError(
                    f'keys should exist in features. Key "{key}" is not in the features dict. '
                    "Fix: check the keys given to forward_features. Received: features keys="
                    f"{sorted(features) if isinstance(features, dict) else type(features)}"
                )
            if key in predictions:
                raise ValueError(
                    f"Cannot forward feature key ({key}): it is already a prediction key. "
                    "Fix: forward another feature or rename the prediction. Received: "
                    f"prediction keys={sorted(predictions)}"
                )
        predictions = dict(predictions)
        for key in names:
            predictions[key] = _forwarded(key, features[key], sparse_default_values)
        export_outputs = dict(spec.export_outputs or {})
        for signature in _SIGNATURES_WITH_FEATURES:
            output = export_outputs.get(signature)
            if isinstance(output, PredictOutput):
                export_outputs[signature] = PredictOutput(
                    {**output.outputs, **{key: predictions[key] for key in names}}
                )
        return spec._replace(predictions=predictions, export_outputs=export_outputs or None)

    return Estimator(new_model_fn, model_dir=estimator.model_dir, config=estimator.config)


__all__ = ["forward_features"]
