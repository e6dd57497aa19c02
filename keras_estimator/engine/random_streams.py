"""Seeded TF1 random ops of a traced training step, their streams restartable per call.

TF1's random ops (`RandomUniform` of dropout, `RandomStandardNormal`, `TruncatedNormal`,
`RandomUniformInt`) keep their Philox stream in their kernel. tf.estimator 2.15 made new
kernels in every call's new session, so each train() call's streams started at their
seeds; here the same compiled step runs call after call, and restarting its streams meant
dropping every TensorFlow kernel and instantiating the step again (0.04 s a call on the
digits MLP, and every other compiled function's kernels with it).

Each such op with a seed draws what the stateless Philox op draws at key `seed` and
counter `[offset, seed2]`, its offset moving on by 256 per element of each draw (TF's
`GuardedPhiloxRandom::ReserveRandomOutputs(n, 256)`). So the op is replaced in the
Estimator's training step by the stateless one reading its offset from a variable of the
model's, and each train() call restarts the stream by setting those variables to 0: the
same numbers, draw for draw, with the step's kernels kept. Ops this does not cover
(unseeded ones, ones in a nested function or TF1 control flow or waited on by a control
edge, a step under a distribution strategy or traced by keras_model.fit) keep their
kernel's stream, and the runtime starts them anew as before.
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from keras_estimator.seam import internals

# The stateful op and the stateless Philox op that draws the same numbers from a key and a
# counter (checked element for element in tests/engine/test_random_streams.py).
_STATELESS_TWINS = {
    "RandomUniform": tf.raw_ops.StatelessRandomUniformV2,
    "RandomStandardNormal": tf.raw_ops.StatelessRandomNormalV2,
    "TruncatedNormal": tf.raw_ops.StatelessTruncatedNormalV2,
    "RandomUniformInt": tf.raw_ops.StatelessRandomUniformIntV2,
}
_PHILOX = 1  # tf.random.Algorithm.PHILOX
_OUTPUTS_RESERVED_PER_ELEMENT = 256  # GuardedPhiloxRandom::ReserveRandomOutputs(n, 256)

# What a traced graph records of its replaced ops, in a collection of its own: (the
# replaced op's output name, the name of the tensor drawing the same numbers), so a hook
# that fetches the raw draw gets the numbers the step used. Names, not tensors (the graph
# keeps the record, and goes with it).
_TWINS_KEY = "keras_estimator_random_twins"


def _twins(graph: tf.Graph) -> dict[str, str]:
    return dict(graph.get_collection(_TWINS_KEY))


def same_draw(tensor: tf.Tensor) -> tf.Tensor:
    """`tensor`, or the tensor that now draws its numbers when its op was replaced."""
    twin = _twins(tensor.graph).get(tensor.name)
    return tensor if twin is None else tensor.graph.get_tensor_by_name(twin)


def replaced_ops(graph: tf.Graph) -> frozenset[str]:
    """The names of the ops of `graph` replaced by stateless twins (left without users)."""
    return frozenset(name.rsplit(":", 1)[0] for name in _twins(graph))


class RandomStreams:
    """The offsets of a model's replaced random ops, by op name: the same op of a later
    trace (the model_fn called again) reads the same variable, so the two traces stay one
    computation (runtime/traces.py StepIdentity) and one stream."""

    def __init__(self) -> None:
        self._offsets: dict[str, tf.Variable] = {}

    def make_restartable(self, graph: tf.Graph) -> None:
        """Replaces the seeded TF1 random ops of `graph` (the step being traced) by their
        stateless twins. Call it at the end of the step's trace, outside any strategy."""
        replaced = _twins(graph)
        for op in graph.get_operations():
            if op.type in _STATELESS_TWINS and f"{op.name}:0" not in replaced and _covered(op):
                graph.add_to_collection(_TWINS_KEY, (f"{op.name}:0", self._twin(op).name))

    def _twin(self, op: tf.Operation) -> tf.Tensor:
        offset = self._offsets.get(op.name)
        if offset is None:
            # [offset, 0]: made eagerly, on the host (where the stateless op reads its
            # counter); not recorded by tf.function as made in the trace (it would trace
            # the step again). The seeds are the op's, constants of each trace.
            with tf.init_scope(), tf.device("/cpu:0"):
                offset = tf.Variable(np.zeros([2], np.int64), trainable=False,
                                     name="random_offset",
                                     experimental_enable_variable_lifting=False)  # fmt: skip
            self._offsets[op.name] = offset
        seed, seed2 = op.get_attr("seed"), op.get_attr("seed2")
        shape = op.inputs[0]
        # The op's control inputs hold for its twin; the counter's arithmetic stays on the
        # host with the variable, the draw where the model_fn put the op.
        with tf.name_scope(f"{op.name}_restartable/"), tf.control_dependencies(op.control_inputs):
            with tf.device(offset.device):
                # Few ops (each is traced every call): [reserved, 0] and [-reserved, seed2].
                static = tf.get_static_value(shape)
                if static is not None:
                    reserved = int(np.prod(static, dtype=np.int64)) * _OUTPUTS_RESERVED_PER_ELEMENT
                    moved = tf.constant([reserved, 0], tf.int64)
                    back = tf.constant([-reserved, seed2], tf.int64)
                else:
                    size = tf.reduce_prod(tf.cast(shape, tf.int64))
                    moved = size * np.array([_OUTPUTS_RESERVED_PER_ELEMENT, 0], np.int64)
                    back = np.array([0, seed2], np.int64) - moved
                # The read after the add, any pruned step drawing these numbers moves it on:
                # [offset before the draw, seed2].
                counter = tf.bitcast(
                    tf.raw_ops.AddV2(x=offset.assign_add(moved), y=back), tf.uint64
                )
            key = tf.constant(np.array([seed], np.int64).view(np.uint64))
            args = dict(shape=shape, key=key, counter=counter, alg=_PHILOX)
            if op.type == "RandomUniformInt":
                args.update(minval=op.inputs[1], maxval=op.inputs[2])
            else:
                args.update(dtype=op.get_attr("dtype"))
            with op.graph.device(op.device):
                draw = _STATELESS_TWINS[op.type](**args)
        draw.set_shape(op.outputs[0].shape)
        internals.rewire_consumers(op.outputs[0], draw)
        return draw

    def restart(self) -> None:
        """Every replaced op's next draw is its first from its seeds (each train() call:
        2.15 drew from a new graph's kernels in every call)."""
        for offset in self._offsets.values():
            offset.assign(np.zeros([2], np.int64))


def _covered(op: tf.Operation) -> bool:
    """Seeded (both seeds 0: TF picks a fresh seed per kernel, nothing to restart), in the
    step's own graph, and used only as data (a control edge to it cannot be moved)."""
    seeds = op.get_attr("seed"), op.get_attr("seed2")
    return seeds != (0, 0) and internals.plain_data_op(op)
