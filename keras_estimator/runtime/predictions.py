"""What predict() yields: selected keys, split into examples, as tf.estimator did."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np


def split_examples(predictions: Any, yield_single_examples: bool) -> Iterator[Any]:
    """One batch of predictions as tf.estimator yielded it: per example, or whole."""
    if isinstance(predictions, dict):
        values = {k: _numpy(v) for k, v in predictions.items()}
        if not yield_single_examples:
            yield values
            return
        for i in range(batch_length(values)):
            yield {k: v[i] for k, v in values.items()}
        return
    value = _numpy(predictions)
    if not yield_single_examples:
        yield value
        return
    if value.ndim == 0:
        raise ValueError(
            "Prediction is a scalar, which has no batch dimension to split; expected "
            "predictions of shape [batch_size, ...]. Fix: pass yield_single_examples=False, "
            f"or return batched predictions. Received: predictions.shape={value.shape}"
        )
    yield from value


def _numpy(value: Any) -> np.ndarray:
    """A batch's prediction as numpy (chunked predictions already are)."""
    return value if isinstance(value, np.ndarray) else value.numpy()


def select_keys(predictions: Any, predict_keys: list[str] | None) -> Any:
    if not predict_keys:
        return predictions
    if not isinstance(predictions, dict):
        raise ValueError(
            "predict_keys argument is not valid in case of non-dict predictions. Fix: drop "
            "predict_keys, or return a dict of predictions from the model_fn. "
            f"Received: predict_keys={predict_keys!r}"
        )
    selected = {k: v for k, v in predictions.items() if k in predict_keys}
    if not selected:
        raise ValueError(
            f"Expected to run at least one output from {list(predictions)}, "
            f"provided {predict_keys}. Fix: pass predict_keys among those keys. "
            f"Received: predict_keys={predict_keys!r}"
        )
    return selected


def batch_length(values: dict[str, np.ndarray]) -> int:
    length = None
    for key, value in values.items():
        if value.ndim == 0:
            raise ValueError(
                f"Prediction {key!r} is a scalar, which has no batch dimension to split; "
                "expected predictions of shape [batch_size, ...]. Fix: pass "
                "yield_single_examples=False, or return batched predictions. "
                f"Received: predictions[{key!r}].shape={value.shape}"
            )
        length = value.shape[0] if length is None else length
        if value.shape[0] != length:
            raise ValueError(
                "Batch length of predictions should be same. "
                f"{key} has different batch length than others. Fix: return predictions that "
                "all have the batch dimension first, or pass yield_single_examples=False. "
                f"Received: predictions[{key!r}].shape={value.shape}, batch length {length}"
            )
    return length or 0
