"""`Estimator.history`: losses and evaluation results by global step, from model_dir's event
files and from this session's calls."""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import tensorflow as tf

from keras_estimator.runtime.event_files import ScalarReader


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
        self._event_files = ScalarReader()

    def record_loss(self, step: int, loss: float) -> None:
        self._loss[int(step)] = float(loss)

    @property
    def loss(self) -> dict[int, float]:
        """The training loss by global step (event files, then this session's values)."""
        merged = {}
        if self._model_dir is not None:
            merged = {
                s: v["loss"]
                for s, v in self._event_files.read(self._model_dir).items()
                if "loss" in v
            }
        merged.update(self._loss)
        return dict(sorted(merged.items()))

    def record_evaluation(self, name: str | None, step: int, results: dict[str, Any]) -> None:
        values = {
            k: float(v)
            for k, v in results.items()
            if k != "global_step"
            and not isinstance(v, tuple | list | dict | bytes | str)
            and np.ndim(v) == 0
        }  # vector, nested or string metrics (mean_tensor, a Summary) stay in the result
        self._evaluations.setdefault(name, {})[int(step)] = values

    @property
    def evaluations(self) -> dict[int, dict[str, float]]:
        return self.evaluation(None)

    def evaluation(self, name: str | None = None) -> dict[int, dict[str, float]]:
        """The results of `evaluate(name=name)` calls, by global step."""
        merged: dict[int, dict[str, float]] = {}
        if self._model_dir is not None:
            eval_dir = os.path.join(self._model_dir, f"eval_{name}" if name else "eval")
            for step, values in self._event_files.read(eval_dir).items():
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

    def plot(self, *metrics: str, name: str | None = None, ax: Any = None,
             label: str | None = None) -> Any:  # fmt: skip
        """Plots the training loss and the given evaluation metrics against the global step.

        Runs drawn on the same `ax` are told apart by their labels: `label`, or the
        model_dir's folder name (`run_a: training loss`, `run_b: eval accuracy`); a single
        run keeps the plain labels unless `label` is given. Needs matplotlib (optional:
        `pip install matplotlib`). Returns the Axes.

        Example:
            >>> ax = est_a.history.plot("accuracy")
            >>> est_b.history.plot("accuracy", ax=ax)  # legend: run_a: ..., run_b: ...
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
        run = label or os.path.basename(str(self._model_dir or "").rstrip("/")) or "run"
        drawn = []
        loss = self.loss
        if loss:
            drawn += ax.plot(list(loss), list(loss.values()), label="training loss")
        runs = self.evaluation(name)
        for metric in metrics or ("loss",):
            steps = sorted(s for s, values in runs.items() if metric in values)
            if steps:
                drawn += ax.plot(steps, [runs[s][metric] for s in steps], marker="o",
                                 label=f"eval {metric}")  # fmt: skip
        for line in drawn:
            line.set_gid(run)  # which run drew it, for the labels of later overlays
        _label_runs(ax, always=label is not None)
        ax.set_xlabel("global step")
        ax.legend()
        return ax


def _label_runs(ax: Any, always: bool) -> None:
    """Prefixes our lines' labels with their run once the Axes holds more than one run."""
    ours = [line for line in ax.get_lines() if line.get_gid()]
    if not always and len({line.get_gid() for line in ours}) < 2:
        return
    for line in ours:
        prefix = f"{line.get_gid()}: "
        if not line.get_label().startswith(prefix):
            line.set_label(prefix + line.get_label())


def plot_history(estimator: Any, *metrics: str, name: str | None = None, ax: Any = None,
                 label: str | None = None) -> Any:  # fmt: skip
    """`estimator.history.plot(*metrics)`: the loss and evaluation metrics by global step;
    runs overlaid on one `ax` are labelled by `label` or their model_dir's folder name.

    Example:
        >>> ax = keras_estimator.plot_history(est_a, "accuracy")
        >>> keras_estimator.plot_history(est_b, "accuracy", ax=ax)
    """
    return estimator.history.plot(*metrics, name=name, ax=ax, label=label)
