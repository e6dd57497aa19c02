"""engine.metrics and engine.summaries, without an Estimator.

metric_values: a v1 metric's `value` was read before its `update_op`; the step must report
the value after this batch's update, as tf.estimator's separate session.run did. Keras
metrics in eval_metric_ops are per-evaluation state. summaries_every / write_scalars: what
lands in the event files, at which steps.
"""

import glob

import keras
import numpy as np
import pytest
import tensorflow as tf

from keras_estimator.engine.global_step import GlobalStepVariable
from keras_estimator.engine.graph_scope import tf1_graph_scope
from keras_estimator.engine.metrics import metric_values
from keras_estimator.engine.summaries import summaries_every, write_scalars
from keras_estimator.engine.variable_store import VariableStore

v1 = tf.compat.v1
BATCHES = [
    (np.array([1.0, 2.0, 3.0], np.float32), np.array([0, 1, 1]), np.array([0, 1, 0])),
    (np.array([5.0, 7.0, 9.0], np.float32), np.array([1, 1, 0]), np.array([1, 1, 1])),
]


def eval_step(store, make_metrics):
    """An eval step as the Estimator traces it: returns (step, names the trace used)."""
    global_step = GlobalStepVariable.under(None)
    spec = (
        tf.TensorSpec([None], tf.float32),
        tf.TensorSpec([None], tf.int64),
        tf.TensorSpec([None], tf.int64),
    )

    @tf.function(autograph=False)
    def step(x, labels, predictions):
        with tf1_graph_scope(store, global_step):
            values, _ = metric_values(make_metrics(x, labels, predictions), store)
            return values

    with store.creating():
        return step.get_concrete_function(*spec)


def v1_metrics(x, labels, predictions):
    return {
        "mean": v1.metrics.mean(x),
        "accuracy": v1.metrics.accuracy(labels, predictions),
        "total": v1.metrics.mean(x * tf.cast(tf.size(x), tf.float32)),
    }


def test_v1_metric_values_include_the_batch_of_the_step():
    store = VariableStore()
    step = eval_step(store, v1_metrics)
    seen = [{k: float(v) for k, v in step(*map(tf.constant, b)).items()} for b in BATCHES]
    # After the first batch: that batch's values, not the initial 0 the value op read first.
    assert seen[0] == pytest.approx({"mean": 2.0, "accuracy": 2 / 3, "total": 6.0})
    # Streaming over both batches, as one tf.estimator evaluation.
    assert seen[1] == pytest.approx({"mean": 4.5, "accuracy": 4 / 6, "total": 13.5})
    # The metric state is local: out of checkpoints, zeroed for the next evaluation.
    assert store.local_names and not set(store.global_variables())
    store.reset_locals()
    again = step(*map(tf.constant, BATCHES[1]))
    assert float(again["mean"]) == pytest.approx(7.0)
    assert float(again["accuracy"]) == pytest.approx(2 / 3)


def test_keras_metric_in_eval_metric_ops_is_read_after_its_update_and_reset():
    store = VariableStore()
    metric = keras.metrics.Mean(name="keras_mean")

    def make_metrics(x, labels, predictions):
        metric.update_state(x)
        return {"keras_mean": metric, "v1_mean": v1.metrics.mean(x)}

    step = eval_step(store, make_metrics)
    first = step(*map(tf.constant, BATCHES[0]))
    assert float(first["keras_mean"]) == pytest.approx(2.0)
    assert float(first["v1_mean"]) == pytest.approx(2.0)
    second = step(*map(tf.constant, BATCHES[1]))
    assert float(second["keras_mean"]) == pytest.approx(4.5)
    store.reset_locals()  # resets the Keras metric too
    assert float(metric.result()) == 0.0
    assert float(step(*map(tf.constant, BATCHES[1]))["keras_mean"]) == pytest.approx(7.0)


def read_events(directory):
    """{tag: [(step, value), ...]} of every scalar in the event files under `directory`."""
    found = {}
    for path in sorted(glob.glob(f"{directory}/events.out.tfevents.*")):
        for event in v1.train.summary_iterator(path):
            for value in event.summary.value:
                number = (
                    value.simple_value
                    if value.HasField("simple_value")
                    else float(tf.make_ndarray(value.tensor))
                )
                found.setdefault(value.tag, []).append((event.step, number))
    return found


def test_write_scalars_writes_tf1_simple_values_and_skips_non_scalars(tmp_path):
    writer = tf.summary.create_file_writer(str(tmp_path))
    write_scalars(writer, {"accuracy": np.float32(0.75), "vector": [1.0, 2.0], "n": 3}, step=7)
    write_scalars(None, {"accuracy": 1.0}, step=8)  # no writer (a non-chief): nothing
    events = read_events(tmp_path)
    assert events == {"accuracy": [(7, 0.75)], "n": [(7, 3.0)]}


@pytest.mark.parametrize("every, recorded", [(3, [1, 4, 7]), (0, []), (None, [])])
def test_summaries_every_records_the_first_step_of_a_call_and_every_n_after(
    tmp_path, every, recorded
):
    global_step = tf.Variable(0, dtype=tf.int64)
    call_start = tf.constant(0, tf.int64)
    writer = tf.summary.create_file_writer(str(tmp_path))

    @tf.function(autograph=False)
    def step(x):
        with summaries_every(every, global_step.read_value(), call_start):
            v1.summary.scalar("v1_loss", x)  # merged from the SUMMARIES collection
            tf.summary.scalar("v2_loss", x + 1.0)  # through the default writer
        with tf.control_dependencies([global_step.assign_add(1)]):
            return tf.identity(x)

    with writer.as_default():
        for i in range(8):
            step(tf.constant(float(i)))
    writer.flush()
    events = read_events(tmp_path)
    # Stamped with the global step after the step (1-based), as SummarySaverHook did.
    assert events.get("v1_loss", []) == [(s, float(s - 1)) for s in recorded]
    assert events.get("v2_loss", []) == [(s, float(s)) for s in recorded]


def test_a_keras_metric_made_in_the_step_is_local_and_in_no_graph_collection():
    # tf.keras 2 made metric variables in no collection: a Saver built in the step (a hook's,
    # AdaNet's) neither saves nor restores them, and checkpoints leave them out.
    store = VariableStore()
    global_step = GlobalStepVariable.under(None)
    seen = {}

    @tf.function(autograph=False)
    def step():
        with tf1_graph_scope(store, global_step):
            w = tf.compat.v1.get_variable("w", [], initializer=tf.compat.v1.ones_initializer())
            metric = keras.metrics.Mean(name="mean")
            metric.update_state(w)
            seen["globals"] = [v.name for v in tf.compat.v1.global_variables()]
            seen["metric"] = [keras_variable.path for keras_variable in metric.variables]
        return tf.constant(0)

    step()
    assert seen["metric"] and all("mean" not in name for name in seen["globals"])
    assert "w:0" in seen["globals"]
    assert set(store.global_variables()) == {"w"}  # the metric's are local
