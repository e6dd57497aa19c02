"""What one Estimator call promises, whatever the runtime reuses between calls.

tf.estimator 2.15 called the model_fn anew for every train() / evaluate() / predict(), so
hooks an EstimatorSpec carries are fresh per call; Keras callbacks in `hooks=` see the model
`fit()` shows them; a hook or callback failing in its end() leaves the call's final
checkpoint; `keras_model` is the Estimator's model, and weights set on it are what the next
call uses.
"""

import csv
import glob
import os

import keras
import numpy as np
import pytest
import tensorflow.compat.v1 as tf
from helpers import accuracy_np, dataset_input_fn, make_estimator

import keras_estimator as estimator


@pytest.fixture
def data():
    rng = np.random.RandomState(0)
    x = rng.randn(96, 4).astype("float32")
    return x, (x[:, 0] > 0).astype("int32")


class CountingHook(tf.train.SessionRunHook):
    """Counts its begin and after_run calls; every instance is remembered in `made`."""

    def __init__(self, made, kind):
        self.kind, self.begins, self.after_runs, self.ended = kind, 0, 0, False
        made.append(self)

    def begin(self):
        self.begins += 1

    def after_run(self, run_context, run_values):
        self.after_runs += 1

    def end(self, session):
        self.ended = True


def dense_loss(features, labels):
    """A dense layer's logits on features["x"], and their cross-entropy against labels."""
    logits = tf.layers.dense(features["x"], 2)
    return logits, tf.losses.sparse_softmax_cross_entropy(labels, logits)


def sgd_train_op(loss):
    return tf.train.GradientDescentOptimizer(0.1).minimize(loss, tf.train.get_global_step())


def model_fn_with_spec_hooks(made):
    """A model_fn whose EstimatorSpecs carry a hook made in this model_fn call."""

    def model_fn(features, labels, mode, params):
        logits = tf.layers.dense(features["x"], 2)
        if mode == estimator.ModeKeys.PREDICT:
            hook = CountingHook(made, "predict")
            return estimator.EstimatorSpec(
                mode, predictions={"logits": logits}, prediction_hooks=[hook]
            )
        loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
        if mode == estimator.ModeKeys.EVAL:
            hook = CountingHook(made, "eval")
            return estimator.EstimatorSpec(mode, loss=loss, evaluation_hooks=[hook])
        train_op = sgd_train_op(loss)
        hook = CountingHook(made, "train")
        return estimator.EstimatorSpec(mode, loss=loss, train_op=train_op, training_hooks=[hook])

    return model_fn


def test_hooks_made_by_the_model_fn_are_fresh_in_every_call(tmp_path, data):
    x, y = data
    made = []
    est = make_estimator(tmp_path, model_fn_with_spec_hooks(made))
    est.train(dataset_input_fn(x, y, 32, repeat=True), steps=4)
    est.train(dataset_input_fn(x, y, 32, repeat=True), steps=2)
    est.evaluate(dataset_input_fn(x, y, 32))  # 3 batches
    est.evaluate(dataset_input_fn(x, y, 32), steps=2)
    list(est.predict(dataset_input_fn(x, batch_size=48)))  # 2 batches
    list(est.predict(dataset_input_fn(x, batch_size=48)))
    seen = [(hook.kind, hook.after_runs, hook.ended) for hook in made]
    assert seen == [
        ("train", 4, True), ("train", 2, True),
        ("eval", 3, True), ("eval", 2, True),
        ("predict", 2, True), ("predict", 2, True),
    ]  # fmt: skip


@pytest.mark.parametrize("same_step", [True, False])
def test_each_call_calls_the_model_fn_once_and_begins_every_hook_once(tmp_path, data, same_step):
    """A later call whose model_fn builds the step already traced runs on that trace (its
    own trace given up once that is known); one that builds another step runs its own.
    Either way: one model_fn call per Estimator call, every hook begun and ended once."""
    x, y = data
    calls, made = [], []

    def model_fn(features, labels, mode, params):
        calls.append(mode)
        logits, loss = dense_loss(features, labels)
        if not same_step:
            loss += 0.0 * tf.reduce_sum(logits) * float(len(calls))  # a new constant each call
        hook = CountingHook(made, mode)
        if mode == estimator.ModeKeys.EVAL:
            return estimator.EstimatorSpec(mode, loss=loss, evaluation_hooks=[hook])
        train_op = sgd_train_op(loss)
        return estimator.EstimatorSpec(mode, loss=loss, train_op=train_op, training_hooks=[hook])

    est = make_estimator(tmp_path, model_fn)
    for steps in (2, 3, 1):
        est.train(dataset_input_fn(x, y, 32, repeat=True),
                  steps=steps, hooks=[CountingHook(made, "caller")])  # fmt: skip
    for steps in (1, 2):
        est.evaluate(dataset_input_fn(x, y, 32), steps=steps)
    train, evaluate = estimator.ModeKeys.TRAIN, estimator.ModeKeys.EVAL
    assert calls == [train] * 3 + [evaluate] * 2
    assert [(h.kind, h.begins, h.after_runs, h.ended) for h in made] == [
        ("caller", 1, 2, True), (train, 1, 2, True),
        ("caller", 1, 3, True), (train, 1, 3, True),
        ("caller", 1, 1, True), (train, 1, 1, True),
        (evaluate, 1, 1, True), (evaluate, 1, 2, True),
    ]  # fmt: skip
    assert est.latest_checkpoint().endswith("model.ckpt-6")


def test_a_later_evaluate_reports_its_own_model_fns_metric_names(tmp_path, data):
    """Two evaluate() calls whose model_fns build the same metric ops but name them the
    other way round: each call reports the values under its own model_fn's names."""
    x, y = data
    calls = []

    def model_fn(features, labels, mode, params):
        calls.append(mode)
        _, loss = dense_loss(features, labels)
        if mode == estimator.ModeKeys.EVAL:
            ones = tf.metrics.mean(tf.ones_like(loss), name="ones")
            twos = tf.metrics.mean(tf.ones_like(loss) * 2.0, name="twos")
            # Built and listed in the same order both times: only the names differ.
            named = {"a": ones, "b": twos} if calls.count(mode) == 1 else {"b": ones, "a": twos}
            return estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops=named,
                                           evaluation_hooks=[CountingHook([], mode)])  # fmt: skip
        train_op = sgd_train_op(loss)
        return estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

    est = make_estimator(tmp_path, model_fn)
    est.train(dataset_input_fn(x, y, 32, repeat=True), steps=1)
    first = est.evaluate(dataset_input_fn(x, y, 32), steps=1)
    second = est.evaluate(dataset_input_fn(x, y, 32), steps=1)
    assert (first["a"], first["b"]) == (1.0, 2.0)
    assert (second["a"], second["b"]) == (2.0, 1.0)


def test_new_caller_hooks_reuse_the_trace_and_keep_the_cache_bounded(tmp_path, data):
    x, y = data
    calls = []

    def model_fn(features, labels, mode, params):
        calls.append(mode)
        _, loss = dense_loss(features, labels)
        train_op = sgd_train_op(loss)
        return estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

    est = make_estimator(tmp_path, model_fn)
    made = []
    for _ in range(12):
        hook = CountingHook(made, "caller")
        est.train(dataset_input_fn(x, y, 32, repeat=True), steps=1, hooks=[hook])
    # Hooks of the caller do not change what the model_fn builds: one trace, reused; each
    # call's hook still sees exactly its own step.
    assert calls == [estimator.ModeKeys.TRAIN]
    assert [hook.after_runs for hook in made] == [1] * 12
    assert est.latest_checkpoint().endswith("model.ckpt-12")


class MarkerFetcher(tf.train.SessionRunHook):
    """Fetches `fetch` (a tensor the model_fn made, or its name) at every step."""

    def __init__(self, fetch):
        self.fetch, self.seen = fetch, []

    def before_run(self, run_context):
        return tf.train.SessionRunArgs(self.fetch)

    def after_run(self, run_context, run_values):
        self.seen.append(float(run_values.results))


@pytest.mark.parametrize("by_name", [False, True])
@pytest.mark.parametrize("same_graph", [True, False])
def test_hooks_made_per_call_fetch_the_values_of_their_own_calls_steps(
    tmp_path, data, by_name, same_graph
):
    """A later call whose model_fn builds the same step runs its new hooks on the loop
    already made; one that builds another step runs its own. Either way each call's hook
    fetches its own steps' values, by tensor or by name."""
    x, y = data
    made = []

    def model_fn(features, labels, mode, params):
        logits, loss = dense_loss(features, labels)
        step = tf.train.get_global_step()
        marker = tf.identity(tf.cast(step, tf.float32) * 10.0, name="marker")
        if not same_graph and made:
            loss += 0.0 * tf.reduce_sum(logits)  # this call's step differs from the last
        train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, step)
        made.append(MarkerFetcher("marker:0" if by_name else marker))
        return estimator.EstimatorSpec(mode, loss=loss, train_op=train_op,
                                       training_hooks=[made[-1]])  # fmt: skip

    est = make_estimator(tmp_path, model_fn)
    for steps in (3, 2, 4):
        est.train(dataset_input_fn(x, y, 32, repeat=True), steps=steps)
    assert [hook.seen for hook in made] == [
        [0.0, 10.0, 20.0], [30.0, 40.0], [50.0, 60.0, 70.0, 80.0]
    ]  # fmt: skip
    assert est.latest_checkpoint().endswith("model.ckpt-9")


def test_keras_metrics_made_per_evaluate_start_from_zero(tmp_path, data):
    """A Keras metric the EVAL model_fn makes (new variables each call) beside its own
    evaluation hook: every evaluate() counts its own batches only."""
    x, y = data
    made = []

    def model_fn(features, labels, mode, params):
        logits, loss = dense_loss(features, labels)
        if mode == estimator.ModeKeys.EVAL:
            count = keras.metrics.Sum(name="examples")
            count.update_state(tf.ones_like(loss) * tf.cast(tf.shape(logits)[0], tf.float32))
            hook = CountingHook(made, "eval")
            return estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops={"examples": count},
                                           evaluation_hooks=[hook])  # fmt: skip
        train_op = sgd_train_op(loss)
        return estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

    est = make_estimator(tmp_path, model_fn)
    est.train(dataset_input_fn(x, y, 32, repeat=True), steps=1)
    first = est.evaluate(dataset_input_fn(x, y, 32))
    second = est.evaluate(dataset_input_fn(x, y, 32), steps=2)
    assert (first["examples"], second["examples"]) == (96.0, 64.0)
    assert [hook.after_runs for hook in made] == [3, 2]


@pytest.mark.parametrize(
    "make_callback",
    [
        pytest.param(lambda d: keras.callbacks.TensorBoard(str(d / "tb")), id="TensorBoard"),
        pytest.param(lambda d: keras.callbacks.CSVLogger(str(d / "log.csv")), id="CSVLogger"),
        pytest.param(lambda d: keras.callbacks.TerminateOnNaN(), id="TerminateOnNaN"),
        pytest.param(lambda d: keras.callbacks.EarlyStopping(monitor="loss"), id="EarlyStopping"),
        pytest.param(
            lambda d: keras.callbacks.ModelCheckpoint(
                str(d / "w.weights.h5"), save_weights_only=True, monitor="loss"
            ),
            id="ModelCheckpoint",
        ),
        pytest.param(lambda d: keras.callbacks.LambdaCallback(), id="LambdaCallback"),
    ],
)
def test_keras_callbacks_in_train_end_with_the_final_checkpoint(tmp_path, data, make_callback):
    x, y = data
    est = make_estimator(tmp_path / "model")
    callback = make_callback(tmp_path)
    est.train(dataset_input_fn(x, y, 32, repeat=True), max_steps=30, hooks=[callback])
    assert est.latest_checkpoint().endswith("model.ckpt-30")
    assert callback.model is est.keras_model


def test_keras_callbacks_read_what_fit_gives_them(tmp_path, data):
    x, y = data
    est = make_estimator(tmp_path / "model")
    seen = {}

    def on_train_end(logs):
        model = callback.model
        seen["iterations"] = int(model.optimizer.iterations.numpy())
        seen["history"] = model.history.history
        seen["weights"] = len(model.get_weights())

    callback = keras.callbacks.LambdaCallback(on_train_end=on_train_end)
    log = tmp_path / "log.csv"
    est.train(
        dataset_input_fn(x, y, 32, repeat=True),
        steps=12,
        hooks=[callback, keras.callbacks.CSVLogger(str(log)),
               keras.callbacks.TensorBoard(str(tmp_path / "tb"), update_freq=1)],
    )  # fmt: skip
    assert seen["iterations"] == 12  # model.optimizer.iterations is the global step
    assert list(seen["history"]) == ["loss"] and len(seen["history"]["loss"]) == 1
    assert seen["weights"] == len(est.get_variable_names())
    with open(log, newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 1 and np.isfinite(float(rows[0]["loss"]))
    assert glob.glob(str(tmp_path / "tb" / "train" / "events.out.tfevents.*"))


def test_stop_training_stops_the_call_at_the_next_step(tmp_path, data):
    x, y = data
    est = make_estimator(tmp_path)

    def on_train_batch_end(batch, logs):
        if batch == 6:
            callback.model.stop_training = True

    callback = keras.callbacks.LambdaCallback(on_train_batch_end=on_train_batch_end)
    est.train(dataset_input_fn(x, y, 32, repeat=True), steps=50, hooks=[callback])
    assert est.latest_checkpoint().endswith("model.ckpt-7")


class FailingAtEnd(keras.callbacks.Callback):
    def on_train_end(self, logs=None):
        raise RuntimeError("callback failed in on_train_end")


class HookFailingAtEnd(tf.train.SessionRunHook):
    def end(self, session):
        raise RuntimeError("hook failed in end")


@pytest.mark.parametrize("failing", [FailingAtEnd, HookFailingAtEnd], ids=["callback", "hook"])
def test_a_failing_end_still_leaves_the_final_checkpoint(tmp_path, data, failing):
    x, y = data
    est = make_estimator(tmp_path, save_checkpoints_steps=100)
    with pytest.raises(RuntimeError, match="failed in"):
        est.train(dataset_input_fn(x, y, 32, repeat=True), max_steps=40, hooks=[failing()])
    assert est.latest_checkpoint().endswith("model.ckpt-40")
    est.train(dataset_input_fn(x, y, 32, repeat=True), max_steps=45)  # resumes from 40
    assert est.latest_checkpoint().endswith("model.ckpt-45")


def test_keras_model_of_a_new_estimator_is_a_model_built_on_its_first_data(tmp_path, data):
    x, y = data
    est = make_estimator(tmp_path)
    model = est.keras_model
    assert isinstance(model, keras.Model)
    with pytest.raises(ValueError, match=r"(?s)do not exist yet.*est\.train"):
        model.set_weights([])
    dataset = dataset_input_fn(x, y, 32, repeat=True)()
    model.fit(dataset, steps_per_epoch=5, epochs=1, verbose=0)
    assert est.keras_model is model
    assert est.latest_checkpoint().endswith("model.ckpt-5")
    assert est.evaluate(dataset_input_fn(x, y, 32))["global_step"] == 5


def test_weights_set_on_keras_model_are_what_the_next_call_uses(tmp_path, data):
    x, y = data
    est = make_estimator(tmp_path)
    est.train(dataset_input_fn(x, y, 32, repeat=True), steps=3)
    model = est.keras_model
    # Every float weight zeroed; the global step (an int64 weight) stays at 3.
    zeros = [np.zeros_like(w) if w.dtype.kind == "f" else w for w in model.get_weights()]
    model.set_weights(zeros)
    assert est.evaluate(dataset_input_fn(x, y, 32))["global_step"] == 3
    for name in est.get_variable_names():
        value = est.get_variable_value(name)
        assert name == "global_step" or not np.any(value)

    trained = make_estimator(tmp_path / "trained")
    trained.train(dataset_input_fn(x, y, 32, repeat=True), steps=200)
    weights = str(tmp_path / "trained.weights.h5")
    trained.keras_model.save_weights(weights)
    target = trained.evaluate(dataset_input_fn(x, y, 32))["accuracy"]
    other = make_estimator(tmp_path / "other")
    other.train(dataset_input_fn(x, y, 32, repeat=True), steps=1)
    other.keras_model.load_weights(weights)
    assert other.evaluate(dataset_input_fn(x, y, 32))["accuracy"] == pytest.approx(target)
    assert accuracy_np(other, x, y) == pytest.approx(target)
    assert os.path.exists(other.latest_checkpoint() + ".index")
