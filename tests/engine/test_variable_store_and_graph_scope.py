"""engine.variable_store, engine.graph_scope and engine.global_step, without an Estimator.

A TF1 model_fn is traced the way the Estimator traces it (a tf.function traced inside
`store.creating()`, the model_fn run inside `tf1_graph_scope`): its variables get TF1 names,
`get_variable` reuse works as in TF1, and every later trace (another input signature,
another mode) gets the same variables back instead of new ones.
"""

import numpy as np
import pytest
import tensorflow as tf

from keras_estimator.engine.global_step import GlobalStepVariable
from keras_estimator.engine.graph_scope import global_step_read, tf1_graph_scope
from keras_estimator.engine.variable_store import VariableStore

v1 = tf.compat.v1
KERNEL = np.array([[1.0], [2.0], [3.0]], np.float32)


def trace(store, global_step, model_fn, spec=None):
    """Traces `model_fn(x)` as a step; returns (concrete function, names it used)."""

    @tf.function(autograph=False)
    def step(x):
        with tf1_graph_scope(store, global_step):
            return model_fn(x)

    with store.creating() as used:
        concrete = step.get_concrete_function(spec or tf.TensorSpec([None, 3], tf.float32))
    return concrete, used


def linear_model_fn(x):
    """A TF1-style model: a scoped get_variable, an AUTO_REUSE'd scale, a metric counter."""
    with v1.variable_scope("linear"):
        kernel = v1.get_variable("kernel", initializer=KERNEL)
        bias = v1.get_variable("bias", [1], initializer=v1.zeros_initializer())
    with v1.variable_scope("head", reuse=v1.AUTO_REUSE):
        scale = v1.get_variable("scale", [], initializer=v1.ones_initializer())
        again = v1.get_variable("scale", [], initializer=v1.ones_initializer())
    assert again is scale  # AUTO_REUSE inside one call
    count = v1.get_variable(
        "count",
        [],
        initializer=v1.zeros_initializer(),
        collections=[v1.GraphKeys.LOCAL_VARIABLES],
        trainable=False,
    )
    return {"y": (tf.matmul(x, kernel) + bias) * scale, "count": count.assign_add(1.0)}


@pytest.fixture
def global_step():
    return GlobalStepVariable.under(None)


def test_variables_get_tf1_names_and_are_created_once_across_traces(global_step):
    store = VariableStore()
    first, used = trace(store, global_step, linear_model_fn)
    names = {"linear/kernel", "linear/bias", "head/scale", "count"}
    assert set(store.variables) == names and used == names
    assert store.variables["linear/kernel"].name == "linear/kernel:0"
    created = dict(store.variables)

    # Another trace (another input signature, as a new mode or batch shape would be): the
    # same variable objects, nothing renamed to linear_1/... and nothing added.
    second, used_again = trace(store, global_step, linear_model_fn, tf.TensorSpec([2, 3]))
    assert used_again == names
    assert store.variables.keys() == created.keys()
    assert all(store.variables[name] is created[name] for name in names)

    x = np.array([[1.0, 0.0, 0.0], [1.0, 1.0, 1.0]], np.float32)
    np.testing.assert_allclose(first(tf.constant(x))["y"], x @ KERNEL)
    store.variables["head/scale"].assign(2.0)  # both traces read the one variable
    np.testing.assert_allclose(second(tf.constant(x))["y"], 2.0 * (x @ KERNEL))


def test_local_variables_are_kept_out_of_checkpoints_and_reset(global_step):
    store = VariableStore()
    concrete, _ = trace(store, global_step, linear_model_fn)
    x = tf.ones([1, 3])
    assert [float(concrete(x)["count"]) for _ in range(3)] == [1.0, 2.0, 3.0]
    assert store.local_names == {"count"}
    assert set(store.global_variables()) == {"linear/kernel", "linear/bias", "head/scale"}
    assert store.local_variables() == [store.variables["count"]]
    store.reset_locals()  # as a fresh tf.estimator session before each evaluation
    assert float(store.variables["count"].numpy()) == 0.0
    assert float(store.variables["linear/kernel"].numpy()[2, 0]) == 3.0  # globals untouched


def test_get_variable_twice_without_reuse_raises_as_in_tf1(global_step):
    store = VariableStore()

    def model_fn(x):
        v1.get_variable("w", [3, 1])
        v1.get_variable("w", [3, 1])
        return x

    with pytest.raises(ValueError, match="Variable w already exists"):
        trace(store, global_step, model_fn)


def test_each_trace_sees_its_own_collections_and_the_global_step(global_step):
    store = VariableStore()
    seen = []

    def model_fn(x):
        graph = v1.get_default_graph()
        seen.append(
            {
                "global": sorted(v.name for v in v1.global_variables()),
                "trainable": sorted(v.name for v in v1.trainable_variables()),
                "local": sorted(v.name for v in v1.local_variables()),
                "global_step": v1.train.get_global_step(),
                "read": global_step_read(graph),
            }
        )
        return linear_model_fn(x)

    trace(store, global_step, model_fn)
    trace(store, global_step, model_fn, tf.TensorSpec([2, 3]))
    # Collections start fresh in each traced graph (no "already exists" on a second trace);
    # the global step is in GLOBAL_VARIABLES from the start, never trainable.
    assert seen[0]["global"] == seen[1]["global"] == ["global_step:0"]
    assert seen[0]["trainable"] == seen[1]["trainable"] == []
    assert seen[0]["global_step"] is seen[1]["global_step"] is global_step
    assert seen[0]["read"].dtype == tf.int64  # the step's read of it, for hooks

    def after_model_fn(x):
        out = linear_model_fn(x)
        collections = {
            "global": sorted(v.name for v in v1.global_variables()),
            "trainable": sorted(v.name for v in v1.trainable_variables()),
            "local": sorted(v.name for v in v1.local_variables()),
        }
        seen.append(collections)
        return out

    trace(VariableStore(), global_step, after_model_fn)
    assert seen[-1] == {
        "global": ["global_step:0", "head/scale:0", "linear/bias:0", "linear/kernel:0"],
        "trainable": ["head/scale:0", "linear/bias:0", "linear/kernel:0"],
        "local": ["count:0"],
    }


def test_global_step_is_an_int64_variable_tf1_hooks_can_name(global_step):
    assert global_step.dtype == tf.int64 and not global_step.trainable
    assert int(global_step.numpy()) == 0
    assert global_step.op.name == "global_step"  # what StepCounterHook and friends read
    global_step.assign_add(3)
    assert int(global_step.read_value()) == 3


def test_a_variable_initialised_from_random_ops_of_the_step_gets_their_value_once(global_step):
    # The TF1 idiom `get_variable(initializer=tf.truncated_normal(...))`: the initial value
    # is a tensor computed inside the model_fn; TF1 ran it once, when initialising.
    store = VariableStore()

    def model_fn(x):
        with v1.variable_scope("conv1"):
            w = v1.get_variable("W", initializer=v1.truncated_normal([3, 2], stddev=0.01))
            b = v1.get_variable("b", initializer=tf.constant(0.5, shape=[2]))
            scaled = v1.get_variable("scaled", initializer=w.read_value() * 2.0)
        return tf.matmul(x, w) + b + 0.0 * tf.reduce_sum(scaled)

    first, _ = trace(store, global_step, model_fn)
    w = store.variables["conv1/W"]
    initial = w.numpy()
    assert initial.shape == (3, 2) and 0 < np.abs(initial).max() <= 0.02  # truncated at 2 sd
    assert len(np.unique(initial)) == 6  # random, not a constant
    np.testing.assert_allclose(store.variables["conv1/b"].numpy(), [0.5, 0.5])
    np.testing.assert_allclose(store.variables["conv1/scaled"].numpy(), 2.0 * initial)
    # Later traces and calls do not draw again: the value belongs to the variable.
    trace(store, global_step, model_fn, tf.TensorSpec([2, 3]))
    x = np.ones([1, 3], np.float32)
    np.testing.assert_allclose(first(tf.constant(x)), x @ initial + 0.5, rtol=1e-6)
    np.testing.assert_array_equal(store.variables["conv1/W"].numpy(), initial)


def test_a_variable_initialised_from_the_step_input_is_refused(global_step):
    store = VariableStore()

    def model_fn(x):
        v1.get_variable("from_input", initializer=tf.reduce_sum(x))
        return x

    with pytest.raises(ValueError, match="'from_input' is created inside model_fn from a tensor"):
        trace(store, global_step, model_fn)


def test_variables_made_outside_a_model_fn_call_are_not_taken(global_step):
    store = VariableStore()
    with store.creating():
        outside = tf.Variable(1.0, name="outside")  # not within tf1_graph_scope: not ours
    assert store.variables == {}
    assert outside.name == "outside:0"


def test_slot_names_ignore_the_name_scope_minimize_runs_in(tmp_path, toy_data):
    """TF1 named a slot after its variable, whatever name scope minimize() ran in (2.15's
    checkpoints: 'w/Momentum', 'opt/w/Momentum' under variable_scope('opt'))."""

    import keras_estimator as estimator

    v1 = tf.compat.v1

    def model_fn(features, labels, mode):
        with tf.name_scope("ns"):
            w = v1.get_variable("w", [8, 3])
        loss = v1.losses.sparse_softmax_cross_entropy(labels, tf.matmul(features["x"], w))
        with tf.name_scope("training"):
            optimizer = v1.train.MomentumOptimizer(0.1, 0.9)
            first = optimizer.minimize(loss, v1.train.get_global_step())
            with v1.variable_scope("opt"):
                second = v1.train.AdagradOptimizer(0.1).minimize(loss)
        return estimator.EstimatorSpec(mode, loss=loss, train_op=tf.group(first, second))

    x, y = toy_data
    est = estimator.Estimator(model_fn, model_dir=str(tmp_path))
    est.train(lambda: ({"x": x}, y), steps=1)
    names = {name for name, _ in v1.train.list_variables(str(tmp_path))}
    assert {"w", "w/Momentum", "opt/w/Adagrad"} <= names, names
