"""What the training step's trace adds to the model_fn's graph: a list of named passes.

`EstimatorModel._train_step` calls the model_fn in the TF1 graph scope (its summaries
written every save_summary_steps), then runs `TRAIN_STEP_PASSES` in order over a
`TrainStepParts` record: each pass takes the record and returns it, changed or not. The
first ones run inside the model_fn's scope (`in_model_fn_scope`), the rest after it.
Setting `KERAS_ESTIMATOR_SKIP_PASSES=name,name` leaves passes out, to bisect a step that
computes a wrong value (a step without its passes is not tf.estimator's: for debugging).

| pass | what it adds |
|---|---|
| keras_optimizer_train_op | a Keras optimizer returned as train_op applied to the loss |
| begin_hooks | the call's hooks and the EstimatorSpec's begun in the traced graph |
| count_global_step | +1 to the global step, unless the train_op already adds to it |
| restartable_random_streams | seeded TF1 random ops drawing from restartable counters |
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from typing import Any, NamedTuple, Protocol

import keras
import tensorflow as tf

from keras_estimator.engine.graph_scope import global_step_read
from keras_estimator.engine.keras_optimizer import apply_as_train_op
from keras_estimator.engine.random_streams import RandomStreams
from keras_estimator.spec.estimator_spec import EstimatorSpec

SKIP_PASSES_ENV = "KERAS_ESTIMATOR_SKIP_PASSES"
_ASSIGN_OPS = frozenset({"AssignAddVariableOp", "AssignVariableOp", "AssignSubVariableOp"})
_CALL_OPS = frozenset(
    {"If", "StatelessIf", "While", "StatelessWhile", "PartitionedCall", "StatefulPartitionedCall"}
)


class StepHooks(Protocol):
    """The hooks of one Estimator call, begun in the step's trace after the model_fn
    (hooks/runner.py HookRunner): handed to `make_step`, never kept on the model."""

    def attached_to(self, graph: tf.Graph) -> bool: ...

    def attach(self, spec_hooks: tuple, graph: tf.Graph, global_step_read: tf.Tensor) -> None: ...


@dataclasses.dataclass(frozen=True)
class TrainStepParts:
    """What the passes read and change: the traced graph, the model_fn's EstimatorSpec,
    the train_op so far, and the model's facts the passes need.

    Attributes:
        graph: the traced step's graph.
        spec: the model_fn's EstimatorSpec.
        train_op: what the step runs (the spec's train_op, then what passes make of it).
        global_step: the model's global step variable.
        hooks: the call's hooks (None: keras_model.fit's trace).
        spec_hooks: the EstimatorSpec's training hooks (and chief hooks on the chief).
        random_streams: the model's restartable random streams, or None when the step's
            random ops keep their kernels (a replica's step, keras_model.fit's).
    """

    graph: tf.Graph
    spec: EstimatorSpec
    train_op: Any
    global_step: tf.Variable
    hooks: StepHooks | None
    spec_hooks: tuple
    random_streams: RandomStreams | None


class StepPass(NamedTuple):
    name: str
    run: Callable[[TrainStepParts], TrainStepParts]
    in_model_fn_scope: bool  # runs inside the model_fn's TF1 graph scope and summaries


def keras_optimizer_train_op(parts: TrainStepParts) -> TrainStepParts:
    """A Keras optimizer returned as train_op: applied to the loss's gradients of the
    graph's trainable variables (its update ops become the train_op)."""
    optimizer = parts.train_op
    if not isinstance(optimizer, keras.optimizers.Optimizer):
        return parts
    loss = parts.spec.loss
    assert loss is not None  # a TRAIN EstimatorSpec has one (spec_for_mode checks it)
    variables = parts.graph.get_collection(tf.compat.v1.GraphKeys.TRAINABLE_VARIABLES)
    grads = tf.gradients(loss, variables)
    pairs = [(g, v) for g, v in zip(grads, variables) if g is not None]
    if not pairs:
        raise ValueError(
            "The Keras optimizer returned as train_op found no trainable variable that the "
            "loss depends on. Expected the model_fn to create trainable variables (layers) "
            "that the loss is computed from. Fix: compute the loss from the model's "
            "layers, or return an optimizer.minimize(...) op as train_op. "
            f"Received: {len(variables)} trainable variables, none reaching loss={loss.name!r}"
        )
    with tf.name_scope("keras_optimizer"):
        return dataclasses.replace(parts, train_op=apply_as_train_op(optimizer, pairs))


def begin_hooks(parts: TrainStepParts) -> TrainStepParts:
    """Begins the call's hooks and the EstimatorSpec's in the traced graph (once per trace:
    the first replica's), before the summaries are merged, as in 2.15 (its SummarySaverHook
    merged them at the first step): a summary a hook's begin() adds is written too."""
    attach_hooks(parts.hooks, parts.spec_hooks, parts.graph)
    return parts


def _global_step_writes(graph: tf.Graph, global_step: tf.Variable) -> bool | None:
    """True/False when the traced step certainly does / does not write the global step;
    None when a control-flow or function op takes it and only the run can tell."""
    handle = graph.capture(global_step.handle)
    consumer_types = {op.type for op in handle.consumers()}
    if consumer_types & _ASSIGN_OPS:
        return True
    if consumer_types & _CALL_OPS:
        return None
    return False


def count_global_step(parts: TrainStepParts) -> TrainStepParts:
    """The step adds 1 to the global step after its train_op, unless the train_op does
    (a v1 optimizer's minimize(global_step=...)); when only the run can tell (a tf.cond),
    the step checks."""
    global_step, train_op = parts.global_step, parts.train_op
    start = global_step_read(parts.graph)
    writes = _global_step_writes(parts.graph, global_step)
    with tf.control_dependencies([train_op]):
        if writes is False:
            bumped = global_step.assign_add(1, read_value=False)
        elif writes is None:

            def bump() -> tf.Tensor:
                with tf.control_dependencies([global_step.assign_add(1, read_value=False)]):
                    return tf.constant(True)

            bumped = tf.cond(
                tf.equal(global_step.read_value(), start), bump, lambda: tf.constant(False)
            )
        else:
            bumped = tf.no_op()
    with tf.control_dependencies([train_op, bumped]):
        return dataclasses.replace(parts, train_op=tf.no_op(name="train_step_ops"))


def restartable_random_streams(parts: TrainStepParts) -> TrainStepParts:
    """Seeded TF1 random ops replaced by stateless twins whose counters each train() call
    restarts (engine/random_streams.py): only on the Estimator's own trace."""
    if parts.random_streams is not None:
        parts.random_streams.make_restartable(parts.graph)
    return parts


TRAIN_STEP_PASSES: tuple[StepPass, ...] = (
    StepPass("keras_optimizer_train_op", keras_optimizer_train_op, in_model_fn_scope=True),
    StepPass("begin_hooks", begin_hooks, in_model_fn_scope=True),
    StepPass("count_global_step", count_global_step, in_model_fn_scope=False),
    StepPass("restartable_random_streams", restartable_random_streams, in_model_fn_scope=False),
)


def skipped_passes() -> frozenset[str]:
    """The passes `KERAS_ESTIMATOR_SKIP_PASSES` leaves out (read when a model is built).

    Raises:
        ValueError: a name that is not a pass's.
    """
    names = frozenset(n.strip() for n in os.environ.get(SKIP_PASSES_ENV, "").split(",") if n)
    unknown = names - {p.name for p in TRAIN_STEP_PASSES}
    if unknown:
        raise ValueError(
            f"{SKIP_PASSES_ENV} names passes that do not exist: {sorted(unknown)}. Expected "
            f"names among {[p.name for p in TRAIN_STEP_PASSES]}, comma-separated. Fix: "
            f"correct or unset {SKIP_PASSES_ENV}."
        )
    return names


def run_passes(
    parts: TrainStepParts, in_model_fn_scope: bool, skipped: frozenset[str] = frozenset()
) -> TrainStepParts:
    """Runs the passes of one phase (inside the model_fn's scope, or after it) in order."""
    for step_pass in TRAIN_STEP_PASSES:
        if step_pass.in_model_fn_scope == in_model_fn_scope and step_pass.name not in skipped:
            parts = step_pass.run(parts)
    return parts


def attach_hooks(hooks: StepHooks | None, spec_hooks: tuple, graph: tf.Graph) -> None:
    """Begins a call's hooks and the EstimatorSpec's in the traced graph (once per trace:
    the first replica's). What they fetch is pruned from this trace when they ask for it
    (engine/loops.py)."""
    if hooks is not None and not hooks.attached_to(graph):
        hooks.attach(spec_hooks, graph, global_step_read(graph))
