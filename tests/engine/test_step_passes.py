"""The training step's passes, each on a three-op traced graph, and the switch that leaves
passes out for bisecting."""

import dataclasses

import keras
import pytest
import tensorflow as tf

from keras_estimator.engine import step_passes
from keras_estimator.engine.graph_scope import tf1_graph_scope
from keras_estimator.engine.random_streams import RandomStreams, replaced_ops
from keras_estimator.engine.step_passes import TRAIN_STEP_PASSES, TrainStepParts
from keras_estimator.engine.variable_store import VariableStore
from keras_estimator.spec.estimator_spec import EstimatorSpec

v1 = tf.compat.v1


def _traced(make_train_op, apply, streams=None, hooks=None, spec_hooks=()):
    """Traces `loss = (w - 3)^2` with `make_train_op(loss, w)`, runs `apply` on its parts
    in the TF1 graph scope; returns (what one run of the step leaves, the parts)."""
    store = VariableStore()
    global_step = tf.Variable(0, dtype=tf.int64, name="global_step")
    store.variables["global_step"] = global_step
    made = {}

    @tf.function(autograph=False)
    def step():
        with tf1_graph_scope(store, global_step) as graph:
            w = v1.get_variable("w", [], initializer=v1.zeros_initializer())
            loss = tf.square(w - 3.0)
            spec = EstimatorSpec("train", loss=loss, train_op=make_train_op(loss, w))
            parts = TrainStepParts(graph, spec, spec.train_op, global_step, hooks, spec_hooks,
                                   streams)  # fmt: skip
            made["parts"] = parts = apply(parts)
        with tf.control_dependencies([parts.train_op]):
            return global_step.read_value()

    step_value = int(step())
    return step_value, store, made["parts"]


def test_count_global_step_adds_one_unless_the_train_op_does():
    def plain(loss, w):
        return v1.train.GradientDescentOptimizer(0.1).minimize(loss)

    def counting(loss, w):
        return v1.train.GradientDescentOptimizer(0.1).minimize(loss, v1.train.get_global_step())

    count = step_passes.count_global_step
    assert _traced(plain, count)[0] == 1
    assert _traced(counting, count)[0] == 1  # not 2: the train_op counted it
    assert _traced(plain, lambda parts: parts)[0] == 0  # without the pass nothing counts


def test_a_keras_optimizer_returned_as_train_op_becomes_its_updates():
    _, store, parts = _traced(
        lambda loss, w: keras.optimizers.SGD(0.5), step_passes.keras_optimizer_train_op
    )
    assert isinstance(parts.train_op, tf.Operation)
    assert float(store.variables["w"].numpy()) == pytest.approx(3.0)  # 0 - 0.5 * 2 * (0 - 3)


def test_a_keras_optimizer_with_nothing_to_train_is_refused():
    with pytest.raises(ValueError, match="found no trainable variable"):
        _traced(
            lambda loss, w: keras.optimizers.SGD(0.5),
            lambda parts: step_passes.keras_optimizer_train_op(
                dataclasses.replace(parts, spec=parts.spec._replace(loss=tf.constant(1.0)))
            ),
        )


def test_seeded_random_ops_become_restartable_only_with_the_models_streams():
    def noisy(loss, w):
        noise = tf.random.uniform([], seed=7)
        return v1.train.GradientDescentOptimizer(0.1).minimize(loss + noise)

    restart = step_passes.restartable_random_streams
    _, _, parts = _traced(noisy, restart, streams=RandomStreams())
    assert replaced_ops(parts.graph)
    _, _, parts = _traced(noisy, restart, streams=None)  # a replica's or fit's trace
    assert not replaced_ops(parts.graph)


def test_begin_hooks_begins_the_calls_hooks_once_per_graph():
    class Hooks:
        def __init__(self):
            self.graphs = []

        def attached_to(self, graph):
            return graph in self.graphs

        def attach(self, spec_hooks, graph, global_step_read):
            self.graphs.append(graph)
            self.spec_hooks = spec_hooks

    hooks = Hooks()

    def twice(parts):
        return step_passes.begin_hooks(step_passes.begin_hooks(parts))

    _traced(lambda loss, w: tf.no_op(), twice, hooks=hooks, spec_hooks=("spec hook",))
    assert len(hooks.graphs) == 1 and hooks.spec_hooks == ("spec hook",)


def test_the_passes_are_one_ordered_list_and_unknown_names_are_refused(monkeypatch):
    assert [p.name for p in TRAIN_STEP_PASSES] == [
        "keras_optimizer_train_op", "begin_hooks", "count_global_step",
        "restartable_random_streams",
    ]  # fmt: skip
    monkeypatch.setenv(step_passes.SKIP_PASSES_ENV, "count_global_step")
    assert step_passes.skipped_passes() == {"count_global_step"}

    def plain(loss, w):
        return v1.train.GradientDescentOptimizer(0.1).minimize(loss)

    def both_phases(skipped):
        def run(parts):
            parts = step_passes.run_passes(parts, True, skipped)
            return step_passes.run_passes(parts, False, skipped)

        return run

    assert _traced(plain, both_phases(frozenset()))[0] == 1
    assert _traced(plain, both_phases(step_passes.skipped_passes()))[0] == 0
    monkeypatch.setenv(step_passes.SKIP_PASSES_ENV, "count_global_steps")
    with pytest.raises(ValueError, match="count_global_steps"):
        step_passes.skipped_passes()
