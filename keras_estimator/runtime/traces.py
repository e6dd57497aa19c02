"""The traces a model keeps between calls: one per mode and input structure, bounded.

A later call of the same mode on input of the same structure runs the same trace with its
own hooks begun in it, unless the EstimatorSpec carried objects tf.estimator's per-call
model_fn made anew for every call (hooks, a Scaffold): then the model_fn is called again.
When that call traces the same step as before (`StepIdentity`, compared once the new
trace is made) and carried hooks only, its hooks run on the compiled loop already made
(`Trace.adopt`): their fetches are the same tensors of the earlier trace, found by name;
the new trace is dropped before a loop is built or compiled around it.
"""

from __future__ import annotations

import collections
import contextlib
from collections.abc import Iterator
from typing import Any

import tensorflow as tf

from keras_estimator.checkpoint.graph_files import canonical_graph_def, variable_handles
from keras_estimator.engine.loops import Loop, PredictStep
from keras_estimator.hooks.runner import HookRunner

# Traces kept per model (least recently used dropped first): a mode each for TRAIN, EVAL and
# PREDICT, and a few input structures (batch shapes that vary, say).
MAX_TRACES = 8


class StepIdentity:
    """What makes two traces of a step one computation: the same GraphDef (its functions
    named by what they are) over the same captured inputs: a checkpointed variable by its
    name, anything else (a summary writer, an eager constant) by identity; the same TF1
    summaries collected (a collection is not in the GraphDef, and the step writes it); and
    the same tensors and ops returned (`returns`: which tensor is which metric, say).

    A retrace whose step is not known to be the same (a Keras metric made per model_fn call
    captures new variables, a py_func a new token) is run as traced.
    """

    def __init__(
        self, graph: tf.Graph, variables: dict[str, tf.Variable], returns: Any = None
    ) -> None:
        names = {id(h): name for name, v in variables.items() for h in variable_handles(v)}
        self._graph_def = canonical_graph_def(graph.as_graph_def(add_shapes=True))
        self._captures = [
            (internal.name, names.get(id(external), external))
            for external, internal in getattr(graph, "captures", ())
        ]
        self._summaries = [
            getattr(summary, "name", repr(summary))
            for summary in graph.get_collection(tf.compat.v1.GraphKeys.SUMMARIES)
        ]
        self._returns = repr(tf.nest.map_structure(lambda t: getattr(t, "name", repr(t)), returns))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, StepIdentity) or self._graph_def != other._graph_def:
            return False
        if self._summaries != other._summaries or self._returns != other._returns:
            return False
        return len(self._captures) == len(other._captures) and all(
            name == other_name
            and (what == other_what if isinstance(what, str) else what is other_what)
            for (name, what), (other_name, other_what) in zip(self._captures, other._captures)
        )

    __hash__ = None  # type: ignore[assignment]


class Trace:
    """One mode's traced step and loop.

    Args:
        loop: the compiled loop (engine/loops.py) of the traced step.
        used: the names of the variables the step uses (what a checkpoint restores).
        runner: the hooks of the call that traced it, begun in the traced graph.
        per_call: the EstimatorSpec carried hooks or a Scaffold: a later call traces again.
        graph: the traced step's graph (None: a distributed step, traced in its loop).
        identity: what `adopt` compares (kept only for a trace a later call may adopt).
        keeps_kernel_state: the step's kernels keep state (random streams, see
            engine/loops.py has_kernel_state): a seeded call runs it on new kernels.
    """

    def __init__(
        self,
        loop: Loop | PredictStep,
        used: set[str],
        runner: HookRunner,
        per_call: bool,
        graph: tf.Graph | None = None,
        identity: StepIdentity | None = None,
        keeps_kernel_state: bool = True,
    ) -> None:
        self.loop, self.used, self.runner, self.per_call = loop, used, runner, per_call
        self.graph, self.identity = graph, identity
        self.keeps_kernel_state = keeps_kernel_state

    def join(self, runner: HookRunner) -> HookRunner:
        """A later call's hooks on this trace: begun in its graph, as on a fresh trace."""
        runner.join(self.runner)
        return runner

    def adopt(self, runner: HookRunner, source: tf.Graph) -> Trace:
        """This trace's loop running `runner`'s hooks, begun in `source`: a later call's
        trace of the same step (equal `StepIdentity`), dropped unrun.

        Its hooks are tf.estimator's fresh ones of that call; what they fetch from their own
        graph is the same-named tensor of this one (their begin() ran inside the trace, so
        everything they can hold is in both graphs). The loop's kernels are those of the
        earlier calls: a seeded call starts them anew (see ChunkedLoop); an unseeded one
        could not tell its random draws from a new instance's.
        """
        runner.adopt(self.runner, source=source)
        return Trace(self.loop, self.used, runner, True, self.graph, self.identity,
                     self.keeps_kernel_state)  # fmt: skip


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
