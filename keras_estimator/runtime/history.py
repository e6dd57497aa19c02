"""`Estimator.history`: losses and evaluation results of this session, by global step."""

from __future__ import annotations

from typing import Any

import numpy as np


class TrainingHistory:
    """What train() and evaluate() reported in this Python session, keyed by global step.

    `loss` holds the training loss each time training returned to Python (every
    `log_step_count_steps`, checkpoint or hook boundary; every step with
    `RunConfig(steps_per_execution=1)`). `evaluations` holds evaluate()'s results (the
    default evaluation; `evaluation(name)` for `evaluate(name=...)`).

    Example:
        >>> est.train(input_fn, steps=1000); est.evaluate(eval_fn)
        >>> est.history.loss[1000], est.history.evaluations[1000]["accuracy"]
        >>> est.history.plot("accuracy")
    """

    def __init__(self) -> None:
        self.loss: dict[int, float] = {}
        self._evaluations: dict[str | None, dict[int, dict[str, float]]] = {}

    def record_loss(self, step: int, loss: float) -> None:
        self.loss[int(step)] = float(loss)

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
        return self._evaluations.get(name, {})

    def __repr__(self) -> str:
        evaluated = {name or "eval": len(runs) for name, runs in self._evaluations.items()}
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
        if self.loss:
            steps = sorted(self.loss)
            ax.plot(steps, [self.loss[s] for s in steps], label="training loss")
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
