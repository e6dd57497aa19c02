"""Ctrl-C during `train()`: finish the running step, save a checkpoint, then stop.

The first SIGINT (Ctrl-C in a terminal, "interrupt kernel" in Jupyter) asks training to
stop at the next return to Python, after the step (or compiled run of steps, at most
`log_step_count_steps` long) in flight; the final checkpoint is written as at a normal end,
and `train()` raises KeyboardInterrupt. A second Ctrl-C interrupts at once.
"""

from __future__ import annotations

import logging
import signal
import threading
from typing import Any

logger = logging.getLogger("keras_estimator")


class GracefulInterrupt:
    """While active (main thread only), the first SIGINT sets `requested`."""

    def __init__(self) -> None:
        self.requested = False
        self._previous: Any = None
        self._installed = False

    def __enter__(self) -> GracefulInterrupt:
        if threading.current_thread() is threading.main_thread():
            try:
                self._previous = signal.signal(signal.SIGINT, self._handle)
                self._installed = True
            except ValueError:  # not allowed here (e.g. an embedded interpreter)
                self._installed = False
        return self

    def _handle(self, signum: int, frame: Any) -> None:
        self.requested = True
        self._restore()  # a second Ctrl-C interrupts at once
        logger.warning(
            "Interrupted: training stops after the current step and saves a checkpoint "
            "(press Ctrl-C again to stop at once, without it)."
        )

    def _restore(self) -> None:
        if self._installed:
            # None: the previous handler was not set from Python; the default is closest.
            previous = self._previous if self._previous is not None else signal.default_int_handler
            signal.signal(signal.SIGINT, previous)
            self._installed = False

    def __exit__(self, *exc_info: Any) -> None:
        self._restore()
