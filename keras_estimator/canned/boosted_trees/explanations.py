"""Feature importances and directional feature contributions, from the trained ensemble."""

from __future__ import annotations

import collections
from collections.abc import Sequence

import numpy as np


def sum_by_name_and_sort(names: Sequence[str], values: np.ndarray) -> collections.OrderedDict:
    """Sums values per column name; ordered by absolute value, largest first (as 2.8)."""
    totals: dict[str, float] = {}
    for name, value in zip(names, values):
        totals[name] = totals.get(name, 0.0) + float(value)
    return collections.OrderedDict(sorted(totals.items(), key=lambda kv: abs(kv[1]), reverse=True))


def feature_importances(
    node_feature: np.ndarray, node_gain: np.ndarray, names: Sequence[str], normalize: bool
) -> collections.OrderedDict:
    """Gain-based importances: each split's gain added to its feature's column."""
    splits = node_feature >= 0
    importances = np.bincount(node_feature[splits], weights=node_gain[splits], minlength=len(names))
    if normalize:
        if np.any(importances < 0):
            raise ValueError(
                "Cannot normalize feature importances: some are negative (splits of negative "
                "gain, possible without pruning). Expected importances >= 0; call "
                f"experimental_feature_importances(normalize=False). Received: {importances}"
            )
        total = importances.sum()
        if total <= 0:
            raise ValueError(
                "Cannot normalize feature importances: the trees have no splits (trained "
                "yet?). Expected a trained model with at least one split. Received: "
                f"sum of importances={total}"
            )
        importances = importances / total
    return sum_by_name_and_sort(names, importances)


def directional_contributions(
    logits_path: np.ndarray, feature_ids: np.ndarray, names: Sequence[str], classification: bool
) -> tuple[float, collections.OrderedDict]:
    """One example's bias and contribution per column, in prediction space.

    `logits_path` [steps + 1] are the logits after each step of the path through the trees;
    each step's change of the prediction (the probability for a classifier) goes to the
    feature it split on, so `bias + sum(dfc)` is the prediction.
    """
    path = np.asarray(logits_path, np.float64).reshape(-1)
    predictions = 1.0 / (1.0 + np.exp(-path)) if classification else path
    deltas = np.diff(predictions)
    moved = feature_ids >= 0
    contributions = np.bincount(feature_ids[moved], weights=deltas[moved], minlength=len(names))
    return float(predictions[0]), sum_by_name_and_sort(names, contributions)
