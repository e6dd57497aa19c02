"""Ctrl-C or SIGTERM during `train()`: finish the running step, save a checkpoint, then stop.

The first SIGINT (Ctrl-C in a terminal, "interrupt kernel" in Jupyter) asks training to
stop at the next return to Python, after the step (or compiled run of steps, at most
`log_step_count_steps` long) in flight; the final checkpoint is written as at a normal end,
and `train()` raises KeyboardInterrupt.

SIGTERM (Kubernetes, Slurm, a spot VM's preemption notice) does the same when
`RunConfig.save_on_sigterm` is True (the default), then raises `TrainingTerminated`, a
`SystemExit` with status 143 (128 + SIGTERM): uncaught, the process exits with that status
after `finally` blocks ran, as a job scheduler expects of a terminated task, and a rerun
resumes from the checkpoint. tf.estimator 2.15 installed no handler: SIGTERM ended the
process at once, losing the steps since the last checkpoint.

After the first signal the previous handlers are back: a second Ctrl-C or SIGTERM stops at
once. Handlers are installed from the main thread only, and restored when train() ends.
"""

from __future__ import annotations

import logging
import signal
import threading
from typing import Any

logger = logging.getLogger("keras_estimator")

SIGTERM_EXIT_STATUS = 128 + int(signal.SIGTERM)  # what a shell reports for a SIGTERM'd process


class TrainingTerminated(SystemExit):
    """SIGTERM stopped `train()` after a checkpoint was saved; exits with status 143.

    Catch it (or `SystemExit`) to do more before exiting; `str(exc)` says where the
    checkpoint is.
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.code = SIGTERM_EXIT_STATUS


class GracefulInterrupt:
    """While active (main thread only), the first SIGINT (or SIGTERM, when `sigterm`) sets
    `requested`; `signal_name` says which arrived."""

    def __init__(self, sigterm: bool = False) -> None:
        self.requested = False
        self.signal_name: str | None = None
        self._signals = [signal.SIGINT] + ([signal.SIGTERM] if sigterm else [])
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> GracefulInterrupt:
        if threading.current_thread() is not threading.main_thread():
            return self
        for signum in self._signals:
            try:
                if signum == signal.SIGTERM and signal.getsignal(signum) == signal.SIG_IGN:
                    continue  # the parent chose to ignore SIGTERM: keep it ignored
                self._previous[signum] = signal.signal(signum, self._handle)
            except ValueError:  # not allowed here (e.g. an embedded interpreter)
                continue
        return self

    def _handle(self, signum: int, frame: Any) -> None:
        self.requested = True
        self.signal_name = signal.Signals(signum).name
        self._restore()  # a second signal stops at once
        if signum == signal.SIGTERM:
            logger.warning(
                "SIGTERM received: training stops after the current step, saves a checkpoint "
                "and exits with status %d (send SIGTERM again to stop at once, without it).",
                SIGTERM_EXIT_STATUS,
            )
        else:
            logger.warning(
                "Interrupted: training stops after the current step and saves a checkpoint "
                "(press Ctrl-C again to stop at once, without it)."
            )

    def stop_error(self, step: int, saved: str) -> BaseException:
        """What train() raises once it stopped at `step`; `saved` says where the checkpoint
        is ('' when no checkpoint is saved)."""
        if self.signal_name == "SIGTERM":
            message = (
                f"Training stopped by SIGTERM after step {step}{saved}. Run train() again to "
                "continue."
            )
            logger.warning("%s Exiting with status %d.", message, SIGTERM_EXIT_STATUS)
            return TrainingTerminated(message)
        return KeyboardInterrupt(
            f"Training interrupted after step {step}{saved}. Run train() again to continue."
        )

    def _restore(self) -> None:
        for signum, previous in self._previous.items():
            if previous is None:
                # Not set from Python: the closest is Python's default for the signal.
                previous = signal.default_int_handler if signum == signal.SIGINT else signal.SIG_DFL
            signal.signal(signum, previous)
        self._previous = {}

    def __exit__(self, *exc_info: Any) -> None:
        self._restore()
