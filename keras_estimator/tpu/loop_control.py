"""Plain-Python helpers of 2.15 TPUEstimator's training loop, usable on their own.

- `IterationCountEstimator`: how many steps fit in a time budget (`iterations_per_loop`
  given as `"<N>s|m|h"`), from the step times seen so far;
- `ErrorRendezvous`: collects the errors of several threads and re-raises the most
  informative one;
- `SIGNAL`, `OpQueueContext`, `OpSignalOnceQueueContext`: a worker thread fed iteration
  counts through a queue (what drove TPUEstimator's infeed/outfeed threads);
- `PeriodicLogger`: logs at most once per interval.
"""

from __future__ import annotations

import collections
import contextlib
import logging
import queue
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

import numpy as np
import tensorflow as tf

logger = logging.getLogger("keras_estimator")


class RuntimeCounter(NamedTuple):
    """One loop's timing: its runtime, its step count and the time of one step."""

    runtime_secs: float
    steps: int
    step_time_secs: float


class IterationCountEstimator:
    """Estimates how many iterations run in a time budget from recent loop timings.

    The last `capacity` loops' timings are kept; `get(total_secs)` moves the previous
    estimate to `total_secs / mean step time`, and keeps it once the loops' runtime is
    within 10% (last loop) or 5% (mean) of the target while step times are stable. With
    no timing yet it answers 1.

    Args:
        capacity: How many loop timings to keep (positive).

    Example:
        >>> counter = IterationCountEstimator()
        >>> counter.update(runtime_secs=2.0, count=100)  # 20 ms a step
        >>> counter.get(total_secs=10)
        500
    """

    def __init__(self, capacity: int = 20) -> None:
        self._reset(capacity=capacity)

    def _reset(self, capacity: int = 20) -> None:
        if capacity <= 0:
            raise ValueError(
                f"IterationCountEstimator `capacity` must be positive. Actual:{capacity}."
            )
        self._buffer_wheel: collections.deque = collections.deque(maxlen=capacity)
        self._capacity = capacity
        self._min_iterations = 1
        self._last_iterations: float = self._min_iterations
        self._sample_count = 0

    def _column(self, field: str) -> np.ndarray:
        return np.array([getattr(sample, field) for sample in self._buffer_wheel], float)

    def _mean_runtime_secs(self) -> float:
        return float(self._column("runtime_secs").mean()) if self._buffer_wheel else 0.0

    def _mean_step_time_secs(self) -> float:
        return float(self._column("step_time_secs").mean()) if self._buffer_wheel else 0.0

    def _std_step_time_secs(self) -> float:
        return float(self._column("step_time_secs").std()) if self._buffer_wheel else 0.0

    def _diff_less_than_percentage(self, actual: float, target: float, percentage: float) -> bool:
        """Whether `actual` is within `percentage`% of `target` (neither may be 0)."""
        if actual == 0 or target == 0:
            raise ValueError(
                f"Cannot compare runtimes with a zero: actual={actual}, target={target}."
            )
        return abs(target - actual) / target <= percentage / 100

    def _is_step_time_stable(self) -> bool:
        return self._std_step_time_secs() < 0.03 and self._sample_count > self._capacity

    def update(self, runtime_secs: float, count: int) -> None:
        """Records that `count` iterations took `runtime_secs` (ignored unless positive)."""
        if runtime_secs <= 0 or count <= 0:
            logger.debug("IterationCountEstimator ignores runtime %s for %s steps.",
                         runtime_secs, count)  # fmt: skip
            return
        self._buffer_wheel.append(RuntimeCounter(runtime_secs, count, runtime_secs / count))
        self._sample_count += 1

    def get(self, total_secs: float) -> int:
        """The iteration count estimated to take `total_secs` seconds (at least 1).

        Raises:
            ValueError: If `total_secs` is not positive.
        """
        if total_secs <= 0:
            raise ValueError(
                f"Invalid `total_secs`. It must be positive number. Actual:{total_secs}"
            )
        if not self._buffer_wheel:
            return self._min_iterations
        last_runtime = self._buffer_wheel[-1].runtime_secs
        change = total_secs / self._mean_step_time_secs() - self._last_iterations
        close = self._diff_less_than_percentage(
            last_runtime, total_secs, 10
        ) or self._diff_less_than_percentage(self._mean_runtime_secs(), total_secs, 5)
        if close and self._is_step_time_stable():
            change = 0
        self._last_iterations = max(self._last_iterations + change, self._min_iterations)
        logger.debug(
            "IterationCountEstimator: target %.3fs, last runtime %.3fs, next steps %.2f",
            total_secs, last_runtime, self._last_iterations,
        )  # fmt: skip
        return int(self._last_iterations + 0.5)


# Errors that say less than another thread's would (a session closed because of it).
_UNINTERESTING_ERRORS = (tf.errors.CancelledError,)
# Errors MonitoredSession already handled.
_IGNORED_ERRORS = (tf.errors.AbortedError, tf.errors.UnavailableError)


class ErrorRendezvous:
    """Collects errors from several threads; `raise_errors()` re-raises the telling one.

    Each source (a thread's name) records its error (`record_error`, or the
    `catch_errors` block) or that it finished (`record_done`). `raise_errors` waits for
    all sources, then re-raises an error other than a cancellation if there is one, else
    the first recorded.

    Args:
        num_sources: How many sources report.

    Example:
        >>> rendezvous = ErrorRendezvous(2)
        >>> with rendezvous.catch_errors("infeed"):
        ...     raise ValueError("bad file")
        >>> rendezvous.record_done("outfeed")
        >>> rendezvous.raise_errors()  # raises the ValueError
    """

    def __init__(self, num_sources: int) -> None:
        self._errors: dict[str, Any] = {}
        self._num_sources = num_sources
        self._session_cancel_timer: threading.Thread | None = None

    def record_error(self, source: str, exc_info: tuple, session: Any = None) -> None:
        """Records `exc_info` (from `sys.exc_info()`) for `source`; with a session, closes
        it 5 seconds later (so the other threads stop waiting on it)."""
        value = exc_info[1]
        if isinstance(value, _IGNORED_ERRORS):
            return
        self._errors[source] = exc_info
        op = getattr(value, "op", None)
        if op is not None and getattr(op, "type", None) == "CheckNumerics":
            return  # the loop itself finished: no need to close the session
        if session is not None and self._session_cancel_timer is None:

            def close_later() -> None:
                time.sleep(5)
                logger.error("Closing session due to error %s", value)
                try:
                    session.close()
                except Exception:  # noqa: BLE001 - the original error is what matters
                    logger.error("Failed to close session after error; other threads may hang.")

            self._session_cancel_timer = threading.Thread(target=close_later, daemon=True)
            self._session_cancel_timer.start()

    def record_done(self, source: str) -> None:
        """Marks `source` finished (keeping an error it recorded)."""
        logger.info("%s marked as finished", source)
        self._errors.setdefault(source, None)

    @contextlib.contextmanager
    def catch_errors(self, source: str, session: Any = None) -> Iterator[None]:
        """Records any exception of the block as `source`'s error (and swallows it)."""
        try:
            yield
        except Exception:  # noqa: BLE001 - recorded, re-raised by raise_errors()
            self.record_error(source, sys.exc_info(), session)

    def raise_errors(self, timeout_sec: int = 0) -> None:
        """Waits up to `timeout_sec` seconds for every source, then re-raises the most
        informative recorded error (nothing when none was recorded)."""
        for _ in range(timeout_sec):
            if len(self._errors) == self._num_sources:
                break
            time.sleep(1)
        kept = [info for info in self._errors.values() if info is not None]
        telling = [info for info in kept if not isinstance(info[1], _UNINTERESTING_ERRORS)]
        for _, value, traceback in telling + kept:
            logger.warning("Reraising captured error")
            raise value.with_traceback(traceback)


class SIGNAL:
    """Queue signals of the loop threads: negative; positive numbers are iteration counts."""

    NEXT_BATCH = -1
    STOP = -2


class OpQueueContext:
    """A daemon thread running `target(self, *args)`, fed iteration counts by a queue.

    The target reads counts with `read_iteration_counts()` until `stop()` / `join()`.

    Args:
        name: The thread's name.
        target: The thread's function; it gets this context first, then `args`.
        args: The other arguments of `target`.

    Example:
        >>> def work(queue_ctx, out):
        ...     for n in queue_ctx.read_iteration_counts():
        ...         out.append(n)
        >>> seen = []
        >>> ctx = OpQueueContext("worker", work, (seen,))
        >>> ctx.send_next_batch_signal(3); ctx.join(); seen
        [3]
    """

    def __init__(self, name: str, target: Callable, args: tuple) -> None:
        self._name = name
        self._queue: queue.Queue = queue.Queue()
        self._thread = threading.Thread(name=name, target=target, args=(self, *args))
        self._thread.daemon = True
        self._thread.start()

    def stop(self) -> None:
        self._queue.put(SIGNAL.STOP)

    def send_next_batch_signal(self, iterations: int) -> None:
        self._queue.put(iterations)

    def read_iteration_counts(self) -> Iterator[int]:
        """The counts sent, until the stop signal."""
        while True:
            iterations = self._queue.get(block=True)
            if iterations == SIGNAL.STOP:
                logger.info("%s received shutdown signal, stopping.", self._name)
                return
            yield iterations

    def join(self) -> None:
        """Stops the thread and waits for it."""
        logger.info("Shutting down %s thread.", self._name)
        self.stop()
        self._thread.join()


class OpSignalOnceQueueContext(OpQueueContext):
    """An OpQueueContext that passes on only the first count sent."""

    def __init__(self, name: str, target: Callable, args: tuple) -> None:
        self._has_signaled = False
        super().__init__(name, target, args)

    def send_next_batch_signal(self, iterations: int) -> None:
        if not self._has_signaled:
            self._has_signaled = True
            super().send_next_batch_signal(iterations)


class PeriodicLogger:
    """Logs (INFO, to TensorFlow's log) at most once every `seconds` seconds.

    Args:
        seconds: The minimum interval between two messages.
    """

    def __init__(self, seconds: float) -> None:
        self._log_every_n_seconds = seconds
        self._last_log_time = 0.0

    def log(self, msg: str, *args: Any, **kw: Any) -> None:
        """Logs `msg % args` unless a message was logged in the last interval."""
        if time.time() - self._last_log_time > self._log_every_n_seconds:
            self._last_log_time = time.time()
            tf.compat.v1.logging.info(msg, *args, **kw)
