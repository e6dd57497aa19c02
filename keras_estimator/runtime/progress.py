"""A Keras progress bar for `train()`, on in notebooks and terminals, off otherwise."""

from __future__ import annotations

import os
import sys
from typing import Any

_setting: bool | None = None


def set_progress_bar(enabled: bool | None) -> None:
    """Turns the training progress bar on (True), off (False) or back to automatic (None).

    Automatic: on in a Jupyter/IPython kernel or when stdout is a terminal, off in batch
    runs; the environment variable KERAS_ESTIMATOR_PROGRESS=0/1 overrides it.

    Example:
        >>> import keras_estimator
        >>> keras_estimator.set_progress_bar(False)
    """
    global _setting
    _setting = enabled


def progress_enabled() -> bool:
    if _setting is not None:
        return _setting
    env = os.environ.get("KERAS_ESTIMATOR_PROGRESS")
    if env is not None:
        return env.strip().lower() not in ("0", "false", "no", "off", "")
    if "ipykernel" in sys.modules:
        return True
    return bool(getattr(sys.stdout, "isatty", lambda: False)())


class TrainingProgress:
    """Shows steps done out of the steps this train() call will run (when known)."""

    def __init__(self, start: int, target: int | None) -> None:
        self._start = start
        self._bar: Any = None
        if progress_enabled():
            import keras

            total = None if target is None else max(target - start, 0)
            self._bar = keras.utils.Progbar(total, stateful_metrics=["loss", "global_step"])

    def update(self, step: int, loss: float | None) -> None:
        if self._bar is None:
            return
        values = [("global_step", step)] + ([("loss", loss)] if loss is not None else [])
        self._bar.update(step - self._start, values=values)

    def close(self, step: int, loss: float | None) -> None:
        if self._bar is not None:
            values = [("global_step", step)] + ([("loss", loss)] if loss is not None else [])
            self._bar.update(step - self._start, values=values, finalize=True)
