"""A Keras progress bar for `train()`, on in notebooks and terminals, off otherwise.

One updating line per call: the bar is finalized exactly once, and a log line emitted while
the bar is drawn (a warning, or INFO lines the user turned on) ends the bar's line first, so
the record prints on its own line and the bar continues below it. Terminals get Keras'
`Progbar` (the look of `fit()`); a Jupyter kernel gets one display output updated in place
(`notebook_bar.py`), so a saved notebook holds the last state only, not every frame.
"""

from __future__ import annotations

import logging
import os
import sys
import weakref
from typing import Any

from keras_estimator.runtime.notebook_bar import DisplayBar, in_jupyter_kernel

_setting: bool | None = None
# Loggers whose records may interleave with the bar: ours, TensorFlow's, absl's, the root's.
_LOGGERS = ("keras_estimator", "tensorflow", "absl", "")


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


class _EndBarLineBeforeRecords(logging.Filter):
    """Attached once to each of _LOGGERS: before a record is written, the bar that is being
    drawn (if any) ends its line. It never drops a record."""

    current: Any = None  # weakref to the TrainingProgress drawing now

    def filter(self, record: logging.LogRecord) -> bool:
        progress = self.current() if self.current is not None else None
        if progress is not None:
            progress.end_line()
        return True


_filter = _EndBarLineBeforeRecords()


def _attach_filter() -> None:
    for name in _LOGGERS:
        logger = logging.getLogger(name)
        if _filter not in logger.filters:
            logger.addFilter(_filter)


class TrainingProgress:
    """Shows steps done out of the steps this train() call will run (when known)."""

    def __init__(self, start: int, target: int | None) -> None:
        self._start = start
        self._total = None if target is None else max(target - start, 0)
        self._bar: Any = None
        self._line_open = False
        self._finalized = False
        if progress_enabled():
            self._bar = self._new_bar()
            _attach_filter()
            _EndBarLineBeforeRecords.current = weakref.ref(self)

    def _new_bar(self, started: float | None = None) -> Any:
        if in_jupyter_kernel():
            return DisplayBar(self._total, started)
        import keras

        return keras.utils.Progbar(self._total, stateful_metrics=["loss"])

    def update(self, step: int, loss: float | None, *, final: bool = False) -> None:
        if self._bar is None or self._finalized:
            return
        done = step - self._start
        final = final or (self._total is not None and done >= self._total)
        # The bar counts this call's steps; the global step is in the log lines.
        values = [("loss", loss)] if loss is not None else []
        self._bar.update(done, values=values, finalize=final)
        self._line_open = not final
        self._finalized = final

    def end_line(self) -> None:
        """Ends the bar's line so that whatever prints next starts on a fresh line; the next
        update draws the bar again below it."""
        if self._line_open:
            self._line_open = False
            if isinstance(self._bar, DisplayBar):
                # Its output is emptied: the record prints below it, the bar below that.
                self._bar.clear()
                self._bar = self._new_bar(self._bar.started)
                return
            sys.stdout.write("\n")
            sys.stdout.flush()
            self._bar = self._new_bar()  # a new bar starts its line fresh (no backspaces)

    def close(self, step: int, loss: float | None) -> None:
        self.update(step, loss, final=True)
        if _EndBarLineBeforeRecords.current is not None:
            if _EndBarLineBeforeRecords.current() is self:
                _EndBarLineBeforeRecords.current = None
