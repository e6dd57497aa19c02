"""2.15's `head/head_utils`: picking the binary or multi-class head."""

from __future__ import annotations

from typing import Any

from keras_estimator.canned.heads import BinaryClassHead, MultiClassHead


def binary_or_multi_class_head(
    n_classes: int, weight_column: Any, label_vocabulary: Any, loss_reduction: Any
) -> Any:
    """A `BinaryClassHead` for 2 classes, else a `MultiClassHead` (v2 heads)."""
    if n_classes == 2:
        return BinaryClassHead(
            weight_column=weight_column,
            label_vocabulary=label_vocabulary,
            loss_reduction=loss_reduction,
        )
    return MultiClassHead(
        n_classes,
        weight_column=weight_column,
        label_vocabulary=label_vocabulary,
        loss_reduction=loss_reduction,
    )
