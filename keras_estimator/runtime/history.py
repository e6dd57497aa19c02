"""`Estimator.history`: losses and evaluation results by global step, from model_dir's event
files and from this session's calls."""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import tensorflow as tf

from keras_estimator.runtime.event_files import read_scalars


class TrainingHistory:
    """The training loss and evaluation results of a model_dir, keyed by global step.

    Read from model_dir's event files (what TensorBoard shows: the `loss` summaries written
    every `save_summary_steps`, and `evaluate()`'s results in `eval/` or `eval_<name>/`), so
    it survives a kernel restart and covers runs made by other processes; this session's
    calls add what they saw on top. `loss` holds the training loss by step (in this session,
    each time training returned to Python: every `log_step_count_steps`, checkpoint or hook
    boundary). `evaluations` holds the default evaluation's results; `evaluation(name)`
    those of `evaluate(name=...)`.

    Example:
        >>> est.train(input_fn, steps=1000); est.evaluate(eval_fn)
        >>> est.history.loss[1000], est.history.evaluations[1000]["accuracy"]
        >>> est.history.plot("accuracy")
    """

    def __init__(self, model_dir: str | None = None) -> None:
        self._model_dir = model_dir
        self._loss: dict[int, float] = {}
        self._evaluations: dict[str | None, dict[int, dict[str, float]]] = {}

    def record_loss(self, step: int, loss: float) -> None:
        self._loss[int(step)] = float(loss)

    @property
    def loss(self) -> dict[int, float]:
        """The training loss by global step (event files, then this session's values)."""
        merged = {}
        if self._model_dir is not None:
            merged = {s: v["loss"] for s, v in read_scalars(self._model_dir).items() if "loss" in v}
        merged.update(self._loss)
        return dict(sorted(merged.items()))

    def record_evaluation(self, name: str | None, step: int, results: dict[str, Any]) -> None:
        values = {
            k: float(v)
            for k, v in results.items()
            if k != "global_step" and not isinstance(v, tuple | list | dict) and np.ndim(v) == 0
        }  # vector or nested metrics (metrics.mean_tensor, ...) stay in evaluate()'s result
        self._evaluations.setdefault(name, {})[int(step)] = values

    @property
    def evaluations(self) -> dict[int, dict[str, float]]:
        return self.evaluation(None)

    def evaluation(self, name: str | None = None) -> dict[int, dict[str, float]]:
        """The results of `evaluate(name=name)` calls, by global step."""
        merged: dict[int, dict[str, float]] = {}
        if self._model_dir is not None:
            eval_dir = os.path.join(self._model_dir, f"eval_{name}" if name else "eval")
            for step, values in read_scalars(eval_dir).items():
                merged[step] = {k: v for k, v in values.items() if k != "global_step"}
        for step, values in self._evaluations.get(name, {}).items():
            merged.setdefault(step, {}).update(values)
        return dict(sorted(merged.items()))

    def __repr__(self) -> str:
        names = set(self._evaluations)
        if self._model_dir is not None and tf.io.gfile.isdir(self._model_dir):
            names |= {None} | {
                entry.rstrip("/")[len("eval_") :]
                for entry in tf.io.gfile.listdir(self._model_dir)
                if entry.startswith("eval_")
            }
        evaluated = {name or "eval": len(self.evaluation(name)) for name in sorted(names, key=str)}
        evaluated = {name: count for name, count in evaluated.items() if count}
        return f"TrainingHistory(loss: {len(self.loss)} points, evaluations: {evaluated})"

    def plot(self, *metrics: str, name: str | None = None, ax: Any = None) -> Any:
        """Plots the training loss and the given evaluation metrics against the global step.

        Needs matplotlib (optional: `pip install matplotlib`). Returns the Axes.
        """
        try:
            import matplotlib.pyplot as plt
        except ImportError as exc:
            raise ImportError(
                "TrainingHistory.plot needs matplotlib, which is not installed (it is an "
                "optional dependency of keras_estimator). Fix: pip install matplotlib, or read "
                "the numbers from history.loss and history.evaluations."
            ) from exc
        if ax is None:
            _, ax = plt.subplots()
        loss = self.loss
        if loss:
            ax.plot(list(loss), list(loss.values()), label="training loss")
        runs = self.evaluation(name)
        for metric in metrics or ("loss",):
            steps = sorted(s for s, values in runs.items() if metric in values)
            if steps:
                ax.plot(steps, [runs[s][metric] for s in steps], marker="o",
                        label=f"eval {metric}")  # fmt: skip
        ax.set_xlabel("global step")
        ax.legend()
        return ax


def plot_history(estimator: Any, *metrics: str, name: str | None = None, ax: Any = None) -> Any:
    """`estimator.history.plot(*metrics)`: the loss and evaluation metrics by global step."""
    return estimator.history.plot(*metrics, name=name, ax=ax)
