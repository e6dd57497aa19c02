"""The compiled loops around a traced step, and the same loops also returning hook fetches.

Every loop is called as `loop(iterator, num_steps) -> (steps_run, last_outputs)` (PREDICT:
`loop(batch) -> (predictions, hook_values)`). `loop.with_fetches({key: tensor})` gives the
loop whose step also returns those tensors of the traced graph under HOOKS_KEY: it is
pruned from the same trace (TF1's `session.run(fetches)`), so asking for a new fetch never
traces the model_fn again and never calls the user's hooks an extra time. Every stateful op
of the step still runs: the step's control outputs are fetched too.
"""

from __future__ import annotations

import collections
import functools
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np
import tensorflow as tf

from keras_estimator.engine.output_keys import GLOBAL_STEP_KEY, HOOKS_KEY, LOSS_KEY
from keras_estimator.engine.random_streams import replaced_ops
from keras_estimator.seam import internals


def output_specs(outputs: Any) -> Any:
    return tf.nest.map_structure(lambda t: tf.TensorSpec(t.shape, t.dtype), outputs)


def zeros(spec: tf.TensorSpec) -> tf.Tensor:
    return tf.zeros([0 if d is None else d for d in spec.shape.as_list()], spec.dtype)


# Stateful ops that only read: a step whose side effects are all of these runs as is where
# `session.run(outputs)` would have run a pruned graph (PREDICT of most model_fns).
_READ_ONLY_OPS = frozenset({
    "ReadVariableOp", "ResourceGather", "ResourceGatherNd", "VarIsInitializedOp",
    "LookupTableFindV2", "LookupTableSizeV2", "LookupTableExportV2",
})  # fmt: skip


def reads_only(graph: tf.Graph) -> bool:
    """True when every op the traced function runs for its side effects only reads."""
    return all(op.type in _READ_ONLY_OPS for op in getattr(graph, "control_outputs", [None]))


class LoopRun(Protocol):
    """What a loop is called as (a loop with hook fetches is only called)."""

    def __call__(
        self, iterator: Any, num_steps: tf.Tensor, endless: bool = False, whole_call: bool = False
    ) -> tuple[tf.Tensor, Any]:
        """Runs up to `num_steps` steps; `(steps run, the last step's outputs)`. `endless`:
        the iterator's dataset never ends (infinite cardinality), so a loop may leave out
        the check for its end. `whole_call`: these are all the steps of the Estimator call,
        so a loop may run them without the instance later steps would need."""


class Loop(LoopRun, Protocol):
    """The protocol of every loop here (ChunkedLoop, DistributedLoop, DistributedEvalLoop,
    CoordinatedLoop; PredictStep is called per batch instead of with an iterator)."""

    @property
    def step_ops(self) -> list:
        """The stateful ops one step runs (what a hook's later fetch must follow)."""

    def get_concrete_function(self, iterator_spec: Any, steps_spec: Any) -> Any:
        """Traces the loop (the distributed loops trace their step here, in the scopes
        of the caller); the chunked loop's call traces it when first needed."""

    def with_fetches(self, extra: dict[str, tf.Tensor]) -> LoopRun:
        """The same loop whose step also returns `extra` under HOOKS_KEY."""


# Fetch sets a loop keeps what it made for (pruned steps, loops around them): a hook that
# fetches new tensors in every call would otherwise keep every one.
MAX_FETCH_SETS = 16


class FetchCache:
    """What a loop made for each set of hook fetches, the least recently used dropped."""

    def __init__(self) -> None:
        self._made: collections.OrderedDict[tuple, tuple[dict, Any]] = collections.OrderedDict()

    def get(self, extra: dict[str, tf.Tensor], make: Callable[[], Any]) -> Any:
        """What `make()` made for the fetches `extra` (made now if not kept)."""
        key = tuple(sorted((name, id(t)) for name, t in extra.items()))
        kept = self._made.get(key)
        if kept is None:
            # The fetches are kept with it: their ids stay theirs while the key lives.
            kept = self._made[key] = (dict(extra), make())
            while len(self._made) > MAX_FETCH_SETS:
                self._made.popitem(last=False)
        self._made.move_to_end(key)
        return kept[1]


class TracedStep:
    """One traced step function: `fn(*args)` runs it as traced.

    `graph` is the trace's graph, `outputs` and `ops` what `fn` returns and runs
    (`ops`: the control outputs that must run), `num_args` how many of the graph's inputs
    are arguments (the rest are captures). `with_fetches(extra)` returns a function of the
    same arguments giving `(outputs, extra values)`.
    """

    def __init__(
        self, fn: Callable | None, graph: tf.Graph, outputs: Any, ops: list, num_args: int
    ) -> None:
        self.fn, self.graph, self.outputs, self.ops = fn, graph, outputs, ops
        self.num_args = num_args
        self.specs = output_specs(outputs)
        self._pruned = FetchCache()

    @classmethod
    def of(cls, concrete: Any, fn: Callable | None = None) -> TracedStep:
        """The step of a traced `tf.function`'s concrete function (run as `fn`, if given)."""
        num_args = len(concrete.inputs) - len(concrete.captured_inputs)
        ops = list(concrete.graph.control_outputs)
        return cls(fn or concrete, concrete.graph, concrete.structured_outputs, ops, num_args)

    def with_fetches(self, extra: dict[str, tf.Tensor]) -> Callable:
        fn = self.fn
        if not extra and fn is not None and reads_only(self.graph):
            # Nothing to prune away: the traced function itself gives the outputs.
            return lambda *args: (fn(*args), {})
        fetches = (self.outputs, dict(extra), self.ops)
        pruned = self._pruned.get(
            extra, lambda: internals.prune_graph(self.graph, self.num_args, fetches)
        )

        def run(*args: Any) -> tuple[Any, dict]:
            outputs, values, _ = pruned(*tf.nest.flatten(args, expand_composites=True))
            return outputs, values

        return run


def _with_hook_values(outputs: dict, values: dict) -> dict:
    return dict(outputs, **{HOOKS_KEY: values}) if values else dict(outputs)


class FirstNonFiniteLoss:
    """Carries "the first step of a run whose loss was NaN or infinite" through a compiled
    loop: `start()` gives the loop variables, `update(carried, outputs)` follows one step,
    `report(carried, outputs)` gives the run's outputs with the loss and global step of that
    step, if there was one (tf.estimator's NanTensorHook checked every step).

    The check runs beside the steps rather than in the loop's condition: a condition that
    waits for each step's loss would keep the next step from starting early (measured ~10%
    slower on a small MLP).
    """

    def __init__(self, specs: Any) -> None:
        loss = specs.get(LOSS_KEY) if isinstance(specs, dict) else None
        step = specs.get(GLOBAL_STEP_KEY) if isinstance(specs, dict) else None
        self.active = bool(
            loss is not None and loss.dtype.is_floating and loss.shape.rank == 0
            and step is not None and step.dtype == tf.int64 and step.shape.rank == 0
        )  # fmt: skip
        self._loss_dtype = loss.dtype if loss is not None and self.active else tf.float32

    def start(self) -> tuple[tf.Tensor, tf.Tensor]:
        return tf.constant(_NONE_SEEN, tf.int64), tf.zeros([], self._loss_dtype)

    def update(self, carried: tuple, outputs: dict) -> tuple[tf.Tensor, tf.Tensor]:
        # Few ops: each costs ~1-2 us a step in the loop on CPU.
        step, loss = carried
        finite = tf.math.is_finite(outputs[LOSS_KEY])
        now = outputs[GLOBAL_STEP_KEY]  # int64, as the global step; only the first is kept
        new_step = tf.where(finite, step, tf.minimum(step, now))
        return new_step, tf.where(new_step < step, outputs[LOSS_KEY], loss)

    def report(self, carried: tuple, outputs: dict) -> dict:
        step, loss = carried
        seen = step < _NONE_SEEN
        return dict(
            outputs,
            **{
                LOSS_KEY: tf.where(seen, loss, outputs[LOSS_KEY]),
                GLOBAL_STEP_KEY: tf.where(seen, step, outputs[GLOBAL_STEP_KEY]),
            },
        )

    def shapes(self, specs: dict) -> dict:
        """The loop's shape invariants of the outputs: the loss and global step stay scalars
        (so the checks need no reshape), the rest may vary."""
        shapes = tf.nest.map_structure(lambda _: tf.TensorShape(None), specs)
        return dict(shapes, **{LOSS_KEY: tf.TensorShape([]), GLOBAL_STEP_KEY: tf.TensorShape([])})


_NONE_SEEN = 2**63 - 1  # the carried step until a non-finite loss is seen


def loss_is_finite(outputs: Any) -> bool:
    """For steps run from Python: False when the step's loss is NaN or infinite."""
    loss = outputs.get(LOSS_KEY) if isinstance(outputs, dict) else None
    return loss is None or not loss.dtype.is_floating or bool(np.all(np.isfinite(loss.numpy())))


# Steps a call runs one by one from Python before the compiled loop is first traced. Tracing
# and first running the loop cost 0.3-0.5 s (the while loop's trace, Grappler on it) that a
# short evaluation or the first steps of training never win back; a step from Python costs
# ~0.75 ms more than one in the loop (measured on the digits MLP). Training calls end at each
# log line / checkpoint (every 100 steps by default), so training traces its loop early.
TRAIN_STEPS_BEFORE_TRACING = 32
EVAL_STEPS_BEFORE_TRACING = 128


def has_kernel_state(graph: tf.Graph) -> bool:
    """True when the traced step has ops whose kernel keeps state of its own from call to
    call, in its own ops or in a function it calls: stateful random numbers (dropout, say),
    or a queue, table, accumulator or variable created inside the step. Two instances of
    such a step (one called alone, one inside the compiled loop) would each have their own:
    two random streams both starting at the seed, two tables. Random ops replaced by their
    stateless twins (engine/random_streams.py) never run and do not count."""
    ignoring = replaced_ops(graph)
    graph_def = graph.as_graph_def()
    nodes = [
        *(n for n in graph_def.node if n.name not in ignoring),
        *(n for f in graph_def.library.function for n in f.node_def),
    ]
    return any(
        n.op in _KERNEL_STATE_OPS or n.op.startswith("Random") or n.op.endswith(_STATE_SUFFIXES)
        for n in nodes
    )


# With "Random*" (RandomUniform, RandomShuffle, ...) and the suffixes below (candidate
# samplers of sampled softmax / NCE, queues, hash tables, accumulators).
_KERNEL_STATE_OPS = frozenset({
    "TruncatedNormal", "Multinomial", "ParameterizedTruncatedNormal",
    "StatefulUniform", "StatefulUniformInt", "StatefulUniformFullInt",
    "StatefulStandardNormalV2", "StatefulTruncatedNormal", "StatefulRandomBinomial",
    "RngSkip", "RngReadAndSkip", "SampleDistortedBoundingBox", "SampleDistortedBoundingBoxV2",
    "NonDeterministicInts", "VarHandleOp", "VariableV2", "Variable",
})  # fmt: skip
_STATE_SUFFIXES = ("Sampler", "QueueV2", "HashTableV2", "HashTableOfTensorsV2", "Accumulator")


class ChunkedLoop:
    """Up to `num_steps` steps per call in one tf.function, until the iterator ends.

    With `steps_before_tracing` > 0, a call of one step and the first that many steps
    before the loop has been traced run the step itself from Python: the loop is traced
    only once a call needs more steps than that. A step whose kernels keep state must not
    (0; see has_kernel_state): the step called alone and the step inside the loop are two
    instances whose random streams both start at the seed, so the loop would repeat the
    first steps' dropout masks.

    For the same reason such a step (`keeps_kernel_state`) runs as one instance when hooks
    fetch from it too: once a hook has asked for fetches, every step of the loop, watched
    or not, runs in one loop over the step with all the fetches hooks asked for so far
    (`_OneInstance`), rather than fetching steps in a pruned step of their own.

    A call over an endless input (`endless=True`) runs a second loop that takes each batch
    with `get_next()` instead of checking an optional element for the input's end (~7% of
    a 0.8 ms step, measured on the canned DNN). Every step of one Estimator call is run
    with the same `endless` (its input's), so a step with kernel state stays one instance
    within a call; a seeded call starts its kernels anew (the runtime clears them).
    """

    def __init__(
        self,
        step_fn: Callable,
        specs: Any,
        step: TracedStep | None = None,
        steps_before_tracing: int = TRAIN_STEPS_BEFORE_TRACING,
        report_non_finite_loss: bool = False,
        keeps_kernel_state: bool = False,
    ) -> None:
        self._step = step
        self._step_fn = step_fn
        self._specs = specs
        self.keeps_kernel_state = keeps_kernel_state
        self.steps_before_tracing = 0 if keeps_kernel_state else steps_before_tracing
        self._one_instance = _OneInstance(self) if keeps_kernel_state and step else None
        # Training: a run's first non-finite loss is what it returns (evaluation runs on).
        self._report_non_finite = report_non_finite_loss
        self._traced = False
        self._fetching = FetchCache()

        watch = FirstNonFiniteLoss(specs)
        watching = report_non_finite_loss and watch.active

        def loop(iterator: Any, num_steps: tf.Tensor, endless: bool) -> tuple[tf.Tensor, Any]:
            def cond(i, exhausted, outputs, carried):
                return tf.logical_and(i < num_steps, tf.logical_not(exhausted))

            def body(i, exhausted, outputs, carried):
                if endless:
                    has, new_outputs = tf.constant(True), step_fn(iterator.get_next())
                else:
                    nxt = iterator.get_next_as_optional()
                    has = nxt.has_value()
                    new_outputs = tf.cond(has, lambda: step_fn(nxt.get_value()), lambda: outputs)
                if watching:
                    carried = watch.update(carried, new_outputs)
                return i + tf.cast(has, tf.int64), tf.logical_not(has), new_outputs, carried

            init = tf.nest.map_structure(zeros, specs)
            invariants = tf.nest.map_structure(lambda s: tf.TensorShape(None), specs)
            if watching:
                invariants = watch.shapes(specs)
            carried = watch.start() if watching else ()
            i, _, outputs, carried = tf.while_loop(
                cond,
                body,
                (tf.constant(0, tf.int64), tf.constant(False), init, carried),
                shape_invariants=(
                    tf.TensorShape([]), tf.TensorShape([]), invariants,
                    tf.nest.map_structure(lambda _: tf.TensorShape([]), carried),
                ),
            )  # fmt: skip
            return i, watch.report(carried, outputs) if watching else outputs

        self._loop = tf.function(functools.partial(loop, endless=False), autograph=False)
        self._endless_loop = tf.function(functools.partial(loop, endless=True), autograph=False)

    def get_concrete_function(self, iterator_spec: Any, steps_spec: Any) -> Any:
        self._traced = True
        return self._loop.get_concrete_function(iterator_spec, steps_spec)

    @property
    def step_ops(self) -> list:
        """The stateful ops one step runs (what a hook's later fetch must follow)."""
        return self._step.ops if self._step is not None else []

    def __call__(
        self, iterator: Any, num_steps: tf.Tensor, endless: bool = False, whole_call: bool = False
    ) -> tuple[tf.Tensor, Any]:
        steps = int(num_steps)
        if whole_call and steps == 1:
            # The call's only step: no other instance of it runs in this call, so the step
            # itself runs (the loop is neither traced nor instantiated for it).
            ran, outputs, _ = self._steps_from_python(iterator, 1)
            return tf.constant(ran, tf.int64), outputs
        if self._one_instance is not None and self._one_instance.active:
            return self._one_instance(iterator, num_steps, (), endless)
        loop = self._endless_loop if endless else self._loop
        if not self.steps_before_tracing or self._traced:
            # Once traced, a lone step runs in the loop too: a seeded call instantiates the
            # loop's kernels anew anyway, and the step's own would be a second set (~0.1 s
            # on the canned DNN).
            return loop(iterator, num_steps)
        first = steps if steps <= 1 else min(steps, self.steps_before_tracing)
        ran, outputs, stopped = self._steps_from_python(iterator, first)
        if stopped or ran == steps:  # the input ended or a loss diverged, or the call is done
            return tf.constant(ran, tf.int64), outputs
        self._traced = True
        more, last = loop(iterator, tf.constant(steps - ran, tf.int64))
        return tf.constant(ran, tf.int64) + more, last if int(more) else outputs

    def _steps_from_python(self, iterator: Any, steps: int) -> tuple[int, Any, bool]:
        """`(steps run, the last one's outputs, stopped early: input ended or loss diverged)`."""
        ran, outputs = 0, None
        while ran < steps:
            try:
                data = next(iterator)
            except (StopIteration, tf.errors.OutOfRangeError):
                break
            outputs = self._step_fn(data)
            ran += 1
            if self._report_non_finite and not loss_is_finite(outputs):
                return ran, outputs, True  # stops at this step: nothing after it runs
        if outputs is None:
            outputs = tf.nest.map_structure(zeros, self._specs)
        return ran, outputs, ran < steps

    def with_fetches(self, extra: dict[str, tf.Tensor]) -> LoopRun:
        if self._one_instance is not None:
            return self._one_instance.fetching(extra)
        return self._pruned_loop(extra)

    def _pruned_loop(self, extra: dict[str, tf.Tensor]) -> ChunkedLoop:
        """The loop around the step pruned to `extra`, kept per fetch set; its first steps
        run the pruned step from Python (see steps_before_tracing)."""
        return self._fetching.get(extra, lambda: self._loop_fetching(extra))

    def _loop_fetching(
        self, extra: dict[str, tf.Tensor], steps_before_tracing: int = -1
    ) -> ChunkedLoop:
        """This loop around the step pruned to also return `extra` under HOOKS_KEY."""
        assert self._step is not None  # only a loop of hook fetches has none, never asked
        run = self._step.with_fetches(extra)

        def step_fn(data: Any) -> dict:
            return _with_hook_values(*run(data))

        specs = dict(self._specs, **{HOOKS_KEY: output_specs(extra)})
        before = TRAIN_STEPS_BEFORE_TRACING if steps_before_tracing < 0 else steps_before_tracing
        return ChunkedLoop(step_fn, specs, steps_before_tracing=before,
                           report_non_finite_loss=self._report_non_finite)  # fmt: skip


# The most fetches one instance returns: beyond them, a hook that fetches new tensors in
# every call starts again from its own fetches (and the kernels' state with them).
MAX_ONE_INSTANCE_FETCHES = 64


class _OneInstance:
    """A step with kernel state and hook fetches, run as one instance (see ChunkedLoop).

    Its loop returns every fetch any hook has asked for so far, each step; a call reads the
    ones its hooks asked for. Only a fetch not asked for before makes a new loop, whose
    kernels start again (its random streams at the seed): that happens at the first
    fetching step of a trace, before the step ever ran, unless a hook asks for new tensors
    later (then the streams restart there, the one place this differs from TF1's graph).
    """

    def __init__(self, loop: ChunkedLoop) -> None:
        self._loop = loop
        self._fetches: dict[str, tf.Tensor] = {}
        self._fetching: ChunkedLoop | None = None

    @property
    def active(self) -> bool:
        return self._fetching is not None

    def fetching(self, extra: dict[str, tf.Tensor]) -> LoopRun:
        if any(self._fetches.get(key) is not tensor for key, tensor in extra.items()):
            fetches = {**self._fetches, **extra}
            if len(fetches) > MAX_ONE_INSTANCE_FETCHES:
                fetches = dict(extra)
            self._fetches = fetches
            self._fetching = self._loop._loop_fetching(fetches, steps_before_tracing=0)
        keys = tuple(extra)

        def run(iterator: Any, num_steps: tf.Tensor, endless: bool = False,
                whole_call: bool = False) -> tuple[tf.Tensor, Any]:  # fmt: skip
            if whole_call and int(num_steps) == 1:
                # The call's only step: the pruned step alone is this call's one instance.
                pruned = self._loop._pruned_loop(extra)
                return pruned(iterator, num_steps, endless=endless, whole_call=True)
            return self(iterator, num_steps, keys, endless)

        return run

    def __call__(
        self, iterator: Any, num_steps: tf.Tensor, keys: tuple, endless: bool = False
    ) -> tuple[tf.Tensor, Any]:
        assert self._fetching is not None  # called only once active
        ran, outputs = self._fetching(iterator, num_steps, endless=endless)
        outputs = dict(outputs)
        values = outputs.pop(HOOKS_KEY, {})
        return ran, _with_hook_values(outputs, {key: values[key] for key in keys})


def one_step_function(step_fn: Callable) -> Any:
    """`step_fn` on `next(iterator)`, as a tf.function of the iterator (not yet traced)."""
    return tf.function(lambda iterator: step_fn(next(iterator)), autograph=False)


class DistributedLoop:
    """The loop under a strategy: several steps per call, each on `next(iterator)`.

    (A strategy's step inside the chunked loop's `tf.cond` does not run: its replica
    threads capture tensors across the branch; a plain while loop over `next()` does.)
    When the input ends inside a call, the iterator's OutOfRangeError ends it: the steps
    before it have run, their number is read from the global step, and the outputs are
    the last ones known with that global step. Same interface as the chunked loop.
    """

    def __init__(
        self,
        step_fn: Callable | None,
        global_step: tf.Variable,
        one_per_call: bool,
        one: Callable | None = None,
        specs: Any = None,
    ) -> None:
        """`one(iterator)` runs one step (default: `step_fn` on `next(iterator)`, traced
        by `get_concrete_function`); `specs` are its outputs' (default: known once traced).
        A loop of hook fetches is given `one` (pruned from that trace) and no `step_fn`."""
        self._global_step = global_step
        self._one_per_call = one_per_call  # multi-worker: several per call hung collectives
        self._one_concrete: Any = None
        self._step: TracedStep | None = None
        self._specs: Any = specs
        self._last: Any = None
        self._fetching = FetchCache()
        self._function: Any = None  # the tf.function of one step that the loop traces
        if one is None:
            assert step_fn is not None  # without `one`, the loop is the step's
            one = self._function = one_step_function(step_fn)
        self._one = one
        self._many = tf.function(self._run_many, autograph=False)

    def _run_many(self, iterator: Any, num_steps: tf.Tensor) -> Any:
        watch = FirstNonFiniteLoss(self._specs)
        watching = watch.active

        def body(i: tf.Tensor, outputs: Any, carried: tuple) -> tuple:
            # The one-step trace, called: the model_fn (and its hooks) is traced only once.
            outputs = self._one_concrete(iterator)
            return i + 1, outputs, watch.update(carried, outputs) if watching else carried

        init = tf.nest.map_structure(zeros, self._specs)
        invariants = tf.nest.map_structure(lambda s: tf.TensorShape(None), self._specs)
        if watching:
            invariants = watch.shapes(self._specs)
        carried = watch.start() if watching else ()
        _, outputs, carried = tf.while_loop(
            lambda i, outputs, carried: i < num_steps,
            body,
            (tf.constant(0, tf.int64), init, carried),
            shape_invariants=(
                tf.TensorShape([]), invariants,
                tf.nest.map_structure(lambda _: tf.TensorShape([]), carried),
            ),
        )  # fmt: skip
        return watch.report(carried, outputs) if watching else outputs

    def get_concrete_function(self, iterator_spec: Any, steps_spec: Any) -> Any:
        concrete = self._one_concrete = self._function.get_concrete_function(iterator_spec)
        self._step = TracedStep.of(concrete)
        self._specs = self._step.specs
        self._many.get_concrete_function(iterator_spec, steps_spec)
        return concrete

    def __call__(
        self, iterator: Any, num_steps: tf.Tensor, endless: bool = False, whole_call: bool = False
    ) -> tuple[tf.Tensor, Any]:
        steps = int(num_steps)  # >= 1: the training loop never asks for none
        before = int(self._global_step.numpy())
        try:
            if steps > 1 and not self._one_per_call:
                outputs = self._many(iterator, tf.constant(steps, tf.int64))
            else:
                for ran in range(1, steps + 1):
                    outputs = self._one(iterator)
                    if ran < steps and not loss_is_finite(outputs):
                        steps = ran  # a diverged loss stops here: nothing after it runs
                        break
        except (tf.errors.OutOfRangeError, StopIteration):
            ran = int(self._global_step.numpy()) - before
            last = self._last or tf.nest.map_structure(zeros, self._specs)
            return tf.constant(ran, tf.int64), dict(
                last, **{GLOBAL_STEP_KEY: self._global_step.read_value()}
            )
        self._last = outputs
        return tf.constant(steps, tf.int64), outputs

    @property
    def step_ops(self) -> list:
        return self._step.ops if self._step is not None else []

    def with_fetches(self, extra: dict[str, tf.Tensor]) -> DistributedLoop:
        """One step per call, also returning `extra` (replica tensors of the one-step trace)."""
        step = self._step
        assert step is not None  # traced by get_concrete_function before any call

        def make() -> DistributedLoop:
            run = step.with_fetches(extra)
            return DistributedLoop(
                None,
                self._global_step,
                one_per_call=True,
                one=lambda iterator: _with_hook_values(*run(iterator)),
                specs=dict(self._specs, **{HOOKS_KEY: output_specs(extra)}),
            )

        return self._fetching.get(extra, make)


class DistributedEvalLoop:
    """EVAL under a strategy: one step per call on `next(iterator)`, counted here (the
    global step does not move); the input's end ends the loop. Same interface as the
    chunked loop.

    As the undistributed EVAL step, the step keeps only what the metrics depend on (a
    train_op built in EVAL does not run): `updates()` gives, once traced, the step's metric
    update ops, which run with the outputs.
    """

    def __init__(self, step_fn: Callable | None, updates: Callable[[], list] | None = None,
                 run: Callable | None = None, step: TracedStep | None = None) -> None:  # fmt: skip
        """Traces `step_fn` on `next(iterator)` (`get_concrete_function`), its metric
        updates given by `updates()`; a loop of hook fetches is given `run` and its `step`."""
        self._raw: dict = {}

        def trace(iterator: Any) -> Any:
            assert step_fn is not None  # only a loop of hook fetches has none: never traced
            # The step's own outputs: the function's returned copies wait for every
            # stateful op of the trace (a train_op among them).
            self._raw["outputs"] = step_fn(next(iterator))
            return self._raw["outputs"]

        self._trace = tf.function(trace, autograph=False)
        self._updates = updates
        self._run, self._step = run, step
        self._fetching = FetchCache()

    def get_concrete_function(self, iterator_spec: Any, steps_spec: Any) -> Any:
        concrete = self._trace.get_concrete_function(iterator_spec)
        num_args = len(concrete.inputs) - len(concrete.captured_inputs)
        outputs = self._raw["outputs"]
        assert self._updates is not None  # given with step_fn
        self._step = TracedStep(None, concrete.graph, outputs, self._updates(), num_args)
        run = self._step.with_fetches({})
        self._run = lambda iterator: run(iterator)[0]
        return concrete

    def __call__(
        self, iterator: Any, num_steps: tf.Tensor, endless: bool = False, whole_call: bool = False
    ) -> tuple[tf.Tensor, Any]:
        assert self._run is not None and self._step is not None  # traced (or given) first
        ran, outputs = 0, None
        while ran < int(num_steps):
            try:
                outputs = self._run(iterator)
            except (tf.errors.OutOfRangeError, StopIteration):
                break
            ran += 1
        if outputs is None:
            outputs = tf.nest.map_structure(zeros, self._step.specs)
        return tf.constant(ran, tf.int64), outputs

    @property
    def step_ops(self) -> list:
        return self._step.ops if self._step is not None else []

    def with_fetches(self, extra: dict[str, tf.Tensor]) -> DistributedEvalLoop:
        """The loop whose step also returns `extra` (tensors of the one-step trace)."""
        step = self._step
        assert step is not None  # traced by get_concrete_function before any call

        def make() -> DistributedEvalLoop:
            run = step.with_fetches(extra)
            return DistributedEvalLoop(
                None, run=lambda iterator: _with_hook_values(*run(iterator)), step=step
            )

        return self._fetching.get(extra, make)


class PredictStep:
    """PREDICT: `step(batch) -> (predictions, hook values)`, pruned to what they need.

    `chunk(iterator, n)` runs up to `n` batches in one compiled call (no hooks can watch
    them) and returns each batch's predictions as numpy values, in order.
    """

    def __init__(self, step: TracedStep) -> None:
        self._step = step
        self._run = step.with_fetches({})
        self._fetching = FetchCache()
        leaves = tf.nest.flatten(step.outputs)
        self.keeps_kernel_state = has_kernel_state(step.graph)
        # Batches concatenate along the first dimension: dense predictions with one, only;
        # and one random stream (see ChunkedLoop): no chunks for a step drawing numbers.
        self.chunkable = (
            bool(leaves)
            and all(
                isinstance(t, tf.Tensor) and t.shape.rank is not None and t.shape.rank >= 1
                for t in leaves
            )
            and not self.keeps_kernel_state
        )
        self._chunk = tf.function(self._run_chunk, autograph=False) if self.chunkable else None

    def __call__(self, batch: Any) -> tuple[Any, dict]:
        return self._run(batch)

    @property
    def step_ops(self) -> list:
        return self._step.ops

    def with_fetches(self, extra: dict[str, tf.Tensor]) -> Callable:
        return self._fetching.get(extra, lambda: self._step.with_fetches(extra))

    def _run_chunk(self, iterator: Any, num_batches: tf.Tensor) -> tuple:
        specs = tf.nest.flatten(self._step.specs)
        init = [tf.zeros([0, *s.shape.as_list()[1:]], s.dtype) for s in specs]
        invariants = [tf.TensorShape([None, *s.shape.as_list()[1:]]) for s in specs]

        def cond(i, exhausted, sizes, values):
            return tf.logical_and(i < num_batches, tf.logical_not(exhausted))

        def body(i, exhausted, sizes, values):
            nxt = iterator.get_next_as_optional()
            has = nxt.has_value()

            def take() -> tuple:
                out = tf.nest.flatten(self._run(nxt.get_value())[0])
                size = tf.stack([tf.shape(t, out_type=tf.int64)[0] for t in out])
                return (tf.concat([sizes, size[None]], 0),
                        [tf.concat([v, t], 0) for v, t in zip(values, out)])  # fmt: skip

            sizes, values = tf.cond(has, take, lambda: (sizes, values))
            return i + tf.cast(has, tf.int64), tf.logical_not(has), sizes, values

        i, _, sizes, values = tf.while_loop(
            cond,
            body,
            (tf.constant(0, tf.int64), tf.constant(False),
             tf.zeros([0, len(specs)], tf.int64), init),
            shape_invariants=(tf.TensorShape([]), tf.TensorShape([]),
                              tf.TensorShape([None, len(specs)]), invariants),
        )  # fmt: skip
        return i, sizes, values

    def chunk(self, iterator: Any, num_batches: int) -> list:
        """Up to `num_batches` batches' predictions (numpy), fewer where the input ends."""
        assert self._chunk is not None  # called only when `chunkable`
        _, sizes, values = self._chunk(iterator, tf.constant(num_batches, tf.int64))
        sizes = sizes.numpy()
        parts = [np.split(v.numpy(), np.cumsum(sizes[:, j])[:-1]) for j, v in enumerate(values)]
        return [
            tf.nest.pack_sequence_as(self._step.specs, [part[b] for part in parts])
            for b in range(len(sizes))
        ]
