"""evaluate() under RunConfig(eval_distribute=MirroredStrategy) on two logical CPUs
(conftest.py): every replica runs the EVAL model_fn on its own batches, the metrics' local
variables are summed across replicas, and the results equal an undistributed evaluate()."""

import json
import os

import keras
import numpy as np
import pytest
import tensorflow as tf2
import tensorflow.compat.v1 as tf
from helpers import SCRIPTS, dataset_input_fn, make_estimator, mirrored_strategy, start_python

import keras_estimator as estimator

BATCH = 4
TRACED = []  # (mode, replica id) of every model_fn call


def _data(n=22):  # 22 examples, batches of 4: five full batches and a last one of 2
    rng = np.random.RandomState(3)
    x = rng.randn(n, 3).astype(np.float32)
    y = (x @ np.array([1.0, -1.0, 0.5], np.float32) > 0).astype(np.int64)
    return x, y


def model_fn(features, labels, mode, params):
    logits = tf.layers.dense(features["x"], 1, name="logit")[:, 0]
    replica = tf2.distribute.get_replica_context()
    replica_id = None if replica is None else tf2.get_static_value(replica.replica_id_in_sync_group)
    TRACED.append((mode, None if replica_id is None else int(replica_id)))
    probabilities = tf.sigmoid(logits)
    predicted = tf.cast(probabilities > 0.5, tf.int64)
    loss = tf.losses.sigmoid_cross_entropy(labels, logits)
    train_op = tf.train.GradientDescentOptimizer(0.5).minimize(
        loss, global_step=tf.train.get_global_step()
    )
    metrics = {
        "accuracy": tf.metrics.accuracy(labels, predicted),
        "mean_probability": tf.metrics.mean(probabilities),
        "auc": tf.metrics.auc(labels, probabilities),
        "precision": tf.metrics.precision(labels, predicted),
    }
    return estimator.EstimatorSpec(mode, loss=loss, train_op=train_op, eval_metric_ops=metrics)


def _input_fn(x, y, contexts=None):
    def input_fn(input_context=None):
        if contexts is not None:
            contexts.append(input_context)
        return tf2.data.Dataset.from_tensor_slices(({"x": x}, y)).batch(BATCH)

    return input_fn


def test_evaluate_runs_per_replica_and_matches_undistributed(tmp_path):
    x, y = _data()
    strategy = mirrored_strategy()
    trained = make_estimator(tmp_path, model_fn, save_checkpoints_steps=100)
    trained.train(_input_fn(x, y), max_steps=6)
    expected = trained.evaluate(_input_fn(x, y))

    contexts = []
    distributed = make_estimator(
        tmp_path,
        model_fn,
        train_distribute=strategy,
        eval_distribute=strategy,
    )
    TRACED.clear()
    results = distributed.evaluate(_input_fn(x, y, contexts))

    # The EVAL model_fn ran once per replica, on the input_fn's (per-replica) batches.
    assert TRACED == [("eval", 0), ("eval", 1)], TRACED
    assert len(contexts) == 1 and contexts[0].num_replicas_in_sync == 2
    assert results["global_step"] == expected["global_step"] == 6, (results, expected)
    assert sorted(results) == sorted(expected)
    for key in ("accuracy", "mean_probability", "auc", "precision", "loss"):
        np.testing.assert_allclose(results[key], expected[key], rtol=1e-5, err_msg=key)


def test_evaluate_with_steps_and_hooks_under_eval_distribute(tmp_path):
    x, y = _data()
    strategy = mirrored_strategy()
    est = make_estimator(tmp_path, model_fn, train_distribute=strategy, eval_distribute=strategy)
    est.train(_input_fn(x, y), max_steps=3)

    class Counter(tf.train.SessionRunHook):
        calls = 0

        def after_run(self, run_context, run_values):
            Counter.calls += 1

    results = est.evaluate(_input_fn(x, y), steps=2, hooks=[Counter()])
    assert Counter.calls == 2  # one step: one batch per replica
    undistributed = make_estimator(tmp_path, model_fn)
    expected = undistributed.evaluate(_input_fn(x[: 4 * BATCH], y[: 4 * BATCH]))
    np.testing.assert_allclose(results["accuracy"], expected["accuracy"], rtol=1e-6)
    np.testing.assert_allclose(results["loss"], expected["loss"], rtol=1e-5)


@pytest.mark.parametrize("n", [20, 18])  # the last step: both replicas full / one empty
def test_evaluate_last_step_of_the_input(tmp_path, n):
    x, y = _data(n)
    strategy = mirrored_strategy()
    est = make_estimator(tmp_path, model_fn, train_distribute=strategy, eval_distribute=strategy)
    est.train(_input_fn(x, y), max_steps=2)
    results = est.evaluate(_input_fn(x, y))
    expected = make_estimator(tmp_path, model_fn).evaluate(_input_fn(x, y))
    for key in ("accuracy", "auc", "loss"):
        np.testing.assert_allclose(results[key], expected[key], rtol=1e-5, err_msg=key)


def keras_metrics_model_fn(features, labels, mode, params):
    logits = tf.layers.dense(features["x"], 1, name="logit")[:, 0]
    probabilities = tf.sigmoid(logits)
    loss = tf.losses.sigmoid_cross_entropy(labels, logits)
    train_op = tf.train.GradientDescentOptimizer(0.5).minimize(
        loss, global_step=tf.train.get_global_step()
    )
    mean = keras.metrics.Mean(name="mean_probability")
    mean.update_state(probabilities)
    accuracy = keras.metrics.BinaryAccuracy(name="accuracy")
    accuracy.update_state(labels, probabilities)
    return estimator.EstimatorSpec(
        mode,
        loss=loss,
        train_op=train_op,
        eval_metric_ops={"accuracy": accuracy, "mean_probability": mean},
    )


def test_keras_metrics_under_eval_distribute(tmp_path):
    x, y = _data(18)
    strategy = mirrored_strategy()
    est = make_estimator(
        tmp_path, keras_metrics_model_fn, train_distribute=strategy, eval_distribute=strategy
    )
    est.train(_input_fn(x, y), max_steps=3)
    results = est.evaluate(_input_fn(x, y))
    expected = make_estimator(tmp_path, keras_metrics_model_fn).evaluate(_input_fn(x, y))
    for key in ("accuracy", "mean_probability", "loss"):
        np.testing.assert_allclose(results[key], expected[key], rtol=1e-5, err_msg=key)


def test_train_and_evaluate_with_train_and_eval_distribute(tmp_path):
    x, y = _data()
    strategy = mirrored_strategy()
    est = make_estimator(
        tmp_path,
        model_fn,
        train_distribute=strategy,
        eval_distribute=strategy,
        save_checkpoints_steps=4,
    )
    TRACED.clear()
    metrics, _ = estimator.train_and_evaluate(
        est,
        estimator.TrainSpec(_input_fn(np.tile(x, (3, 1)), np.tile(y, 3)), max_steps=8),
        estimator.EvalSpec(_input_fn(x, y), steps=None, throttle_secs=0),
    )
    assert ("eval", 1) in TRACED  # evaluation ran per replica
    assert metrics["global_step"] == 8
    expected = make_estimator(tmp_path, model_fn).evaluate(_input_fn(x, y))
    for key in ("accuracy", "auc", "precision", "loss"):
        np.testing.assert_allclose(metrics[key], expected[key], rtol=1e-5, err_msg=key)


class _FetchLoss(tf.train.SessionRunHook):
    def __init__(self, loss, seen):
        self._loss, self._seen = loss, seen

    def before_run(self, run_context):
        return tf.train.SessionRunArgs(self._loss)

    def after_run(self, run_context, run_values):
        self._seen.append(float(run_values.results))


def test_model_fn_evaluation_hooks_see_the_first_replica(tmp_path):
    x, y = _data(18)
    seen = []

    def hooked_model_fn(features, labels, mode, params):
        spec = model_fn(features, labels, mode, params)
        return spec._replace(evaluation_hooks=[_FetchLoss(spec.loss, seen)])

    strategy = mirrored_strategy()
    est = make_estimator(
        tmp_path, hooked_model_fn, train_distribute=strategy, eval_distribute=strategy
    )
    est.train(_input_fn(x, y), max_steps=2)
    results = est.evaluate(_input_fn(x, y))
    distributed_seen = list(seen)
    seen.clear()
    expected = make_estimator(tmp_path, hooked_model_fn).evaluate(_input_fn(x, y))
    # One step per two batches; hooks fetch replica 0's (the first of each pair), as 2.15.
    np.testing.assert_allclose(distributed_seen, seen[::2], rtol=1e-6)
    np.testing.assert_allclose(results["loss"], expected["loss"], rtol=1e-5)


# -- eval_distribute of its own: without train_distribute, or another strategy object -------
# tf.estimator 2.15 evaluated under eval_distribute whatever train_distribute was (checked in
# its venv on this data: the model_fn ran once per replica, input_fn once with a 2-replica
# InputContext, the metrics equal to an undistributed evaluate()).


def _assert_same_metrics(results, expected, keys=("accuracy", "mean_probability", "auc", "loss")):
    assert results.get("global_step") == expected.get("global_step"), (results, expected)
    assert sorted(results) == sorted(expected)
    for key in keys:
        np.testing.assert_allclose(results[key], expected[key], rtol=1e-5, err_msg=key)


def test_eval_distribute_without_train_distribute_evaluates_per_replica(tmp_path):
    x, y = _data()
    est = make_estimator(tmp_path, model_fn, eval_distribute=mirrored_strategy())
    TRACED.clear()
    est.train(_input_fn(x, y), max_steps=6)
    assert len(TRACED) == 1 and TRACED[0] in (("train", None), ("train", 0))  # no strategy
    contexts = []
    TRACED.clear()
    results = est.evaluate(_input_fn(x, y, contexts))
    assert TRACED == [("eval", 0), ("eval", 1)], TRACED
    assert len(contexts) == 1 and contexts[0].num_replicas_in_sync == 2
    expected = make_estimator(tmp_path, model_fn).evaluate(_input_fn(x, y))
    _assert_same_metrics(results, expected)
    # Training goes on, undistributed, from its own variables; the next evaluation sees it.
    est.train(_input_fn(x, y), max_steps=9)
    results = est.evaluate(_input_fn(x, y), steps=2)  # one step: one batch per replica
    expected = make_estimator(tmp_path, model_fn).evaluate(_input_fn(x[:16], y[:16]))
    _assert_same_metrics(results, expected)
    assert results["global_step"] == 9


def test_eval_distribute_another_strategy_than_train_distribute(tmp_path):
    x, y = _data(18)  # the last step: one replica without a batch
    est = make_estimator(
        tmp_path,
        model_fn,
        train_distribute=tf2.distribute.OneDeviceStrategy("/cpu:0"),
        eval_distribute=mirrored_strategy(),
    )
    TRACED.clear()
    est.train(_input_fn(x, y), max_steps=4)
    results = est.evaluate(_input_fn(x, y))
    assert TRACED == [("train", 0), ("eval", 0), ("eval", 1)], TRACED
    _assert_same_metrics(results, make_estimator(tmp_path, model_fn).evaluate(_input_fn(x, y)))


def test_one_device_eval_distribute_without_train_distribute(tmp_path):
    x, y = _data()
    est = make_estimator(
        tmp_path, model_fn, eval_distribute=tf2.distribute.OneDeviceStrategy("/cpu:1")
    )
    est.train(_input_fn(x, y), max_steps=3)
    contexts = []
    TRACED.clear()
    results = est.evaluate(_input_fn(x, y, contexts))
    assert TRACED == [("eval", 0)] and contexts[0].num_replicas_in_sync == 1
    _assert_same_metrics(results, make_estimator(tmp_path, model_fn).evaluate(_input_fn(x, y)))


def test_train_and_evaluate_with_eval_distribute_only(tmp_path):
    x, y = _data()
    est = make_estimator(
        tmp_path, model_fn, eval_distribute=mirrored_strategy(), save_checkpoints_steps=4
    )
    TRACED.clear()
    metrics, _ = estimator.train_and_evaluate(
        est,
        estimator.TrainSpec(_input_fn(np.tile(x, (3, 1)), np.tile(y, 3)), max_steps=8),
        estimator.EvalSpec(_input_fn(x, y), steps=None, throttle_secs=0),
    )
    assert ("eval", 1) in TRACED and ("train", 1) not in TRACED  # training undistributed
    assert metrics["global_step"] == 8
    assert sorted(est.history.evaluations) == [4, 8]  # every checkpoint, evaluated per replica
    _assert_same_metrics(metrics, make_estimator(tmp_path, model_fn).evaluate(_input_fn(x, y)))


def test_in_memory_evaluator_hook_with_eval_distribute_only(tmp_path):
    # The hook evaluates the variables as they are during train(): evaluation's own
    # variables (under eval_distribute) take the trained values before each evaluation.
    x, y = _data()
    evaluations = {}
    for name, kwargs in (("plain", {}), ("distributed", {"eval_distribute": mirrored_strategy()})):
        est = make_estimator(tmp_path / name, model_fn, tf_random_seed=7, **kwargs)
        hook = estimator.experimental.InMemoryEvaluatorHook(est, _input_fn(x, y), every_n_iter=3)
        TRACED.clear()
        est.train(_input_fn(np.tile(x, (3, 1)), np.tile(y, 3)), max_steps=6, hooks=[hook])
        assert (("eval", 1) in TRACED) == (name == "distributed")
        evaluations[name] = est.history.evaluations
    assert sorted(evaluations["distributed"]) == sorted(evaluations["plain"]) == [0, 3, 6]
    assert evaluations["plain"][0]["loss"] != evaluations["plain"][3]["loss"]
    for step, expected in evaluations["plain"].items():
        _assert_same_metrics(evaluations["distributed"][step], expected)


def test_multi_worker_mirrored_strategy_on_one_machine_evaluates_per_replica(tmp_path):
    # Without TF_CONFIG, and on an `evaluator` task (2.15 evaluated "single-machine" there),
    # a MultiWorkerMirroredStrategy spans this machine's devices: evaluation runs per
    # replica under it, as eval_distribute alone and as train_distribute too. (A strategy
    # spanning several tasks evaluates undistributed on the task that calls evaluate().)
    rng = np.random.RandomState(0)
    x = rng.randn(40, 8).astype("float32")
    y = np.argmax(x[:, :3], 1).astype("int64")
    make_estimator(tmp_path / "model").train(dataset_input_fn(x, y, 8, repeat=True), steps=5)
    script = os.path.join(SCRIPTS, "eval_distribute_multi_worker_strategy.py")
    cases = ("local", "evaluator")
    procs = {
        case: start_python(script, case, str(tmp_path / "model"), str(tmp_path / f"{case}.json"))
        for case in cases
    }
    try:
        logs = {case: proc.communicate(timeout=300)[0] for case, proc in procs.items()}
    finally:
        for proc in procs.values():
            proc.kill()
    for case in cases:
        assert procs[case].returncode == 0, logs[case][-3000:]
        got = json.loads((tmp_path / f"{case}.json").read_text())
        assert got["plain"]["contexts"] == [None]
        for name in ("distributed", "both"):
            # One replica (CPU only: MultiWorkerMirroredStrategy takes one CPU per task).
            assert got[name]["traced"] == [0] and got[name]["contexts"] == [1], (case, got)
            assert got[name]["metrics"]["global_step"] == 5
            for key, value in got["plain"]["metrics"].items():
                np.testing.assert_allclose(got[name]["metrics"][key], value, rtol=1e-6)
