"""2.15's `canned/prediction_keys.py`: `PredictionKeys`, the prediction names canned heads
return."""

from __future__ import annotations


class PredictionKeys:
    """Prediction key strings (tf.estimator 2.15's)."""

    CLASSES = "classes"
    CLASS_IDS = "class_ids"
    ALL_CLASSES = "all_classes"
    ALL_CLASS_IDS = "all_class_ids"
    LOGISTIC = "logistic"
    LOGITS = "logits"
    PREDICTIONS = "predictions"
    PROBABILITIES = "probabilities"
    TOP_K = "top_k"


__all__ = ["PredictionKeys"]
