"""The traces a model keeps between calls: one per mode and input structure, bounded.

A later call of the same mode on input of the same structure runs the same trace with its
own hooks begun in it, unless the EstimatorSpec carried objects tf.estimator's per-call
model_fn made anew for every call (hooks, a Scaffold): then the model_fn is called again.
"""

from __future__ import annotations

import collections
import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from keras_estimator.hooks.runner import HookRunner

# Traces kept per model (least recently used dropped first): a mode each for TRAIN, EVAL and
# PREDICT, and a few input structures (batch shapes that vary, say).
MAX_TRACES = 8


class Trace:
    """One mode's traced step and loop.

    Args:
        loop: the compiled loop (engine/loops.py) of the traced step.
        used: the names of the variables the step uses (what a checkpoint restores).
        runner: the hooks of the call that traced it, begun in the traced graph.
        per_call: the EstimatorSpec carried hooks or a Scaffold: a later call traces again.
    """

    def __init__(self, loop: Callable, used: set[str], runner: HookRunner, per_call: bool):
        self.loop, self.used, self.runner, self.per_call = loop, used, runner, per_call

    def join(self, runner: HookRunner) -> HookRunner:
        """A later call's hooks on this trace: begun in its graph, as on a fresh trace."""
        runner.join(self.runner)
        return runner


class TraceCache:
    """Traces by key, the least recently used dropped beyond MAX_TRACES."""

    def __init__(self) -> None:
        self._traces: collections.OrderedDict[Any, Trace] = collections.OrderedDict()

    def get(self, key: Any) -> Trace | None:
        trace = self._traces.get(key)
        if trace is not None:
            self._traces.move_to_end(key)
        return trace

    def put(self, key: Any, trace: Trace) -> None:
        self._traces[key] = trace
        self._traces.move_to_end(key)
        while len(self._traces) > MAX_TRACES:
            self._traces.popitem(last=False)

    def __contains__(self, key: Any) -> bool:
        return key in self._traces

    def __len__(self) -> int:
        return len(self._traces)

    def pop(self, key: Any) -> None:
        self._traces.pop(key, None)

    def drop_mode(self, mode: str) -> None:
        for key in [k for k in self._traces if k[0] == mode]:
            del self._traces[key]


class ModelSlot:
    """A model and its traces (the trained model; evaluation's own under eval_distribute)."""

    def __init__(self) -> None:
        self.model: Any = None
        self.traces = TraceCache()

    def reset(self, model: Any) -> None:
        """A new model: the old traces called the old one's variables."""
        self.model, self.traces = model, TraceCache()

    @contextlib.contextmanager
    def trace_dropped_on_failure(self, key: Any) -> Iterator[None]:
        """A trace made by a prepare that then fails (a bad checkpoint, say) is dropped:
        it captured the event-file writer that the failure closes."""
        known = key in self.traces
        try:
            yield
        except BaseException:
            if not known:
                self.traces.pop(key)
            raise
