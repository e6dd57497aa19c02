"""Unmodified tf.compat.v1.train SessionRunHooks and CheckpointSaverListeners in train()."""

import logging

import numpy as np
import pytest
import tensorflow.compat.v1 as tf
from helpers import classifier_model_fn, dataset_input_fn, make_estimator

import keras_estimator as estimator


class RecordingHook(tf.train.SessionRunHook):
    """Records the protocol calls and what it saw."""

    def __init__(self, fetch_names=("global_step",)):
        self.calls, self.steps, self.fetch_names = [], [], fetch_names

    def begin(self):
        self.calls.append("begin")
        self.global_step = tf.train.get_global_step()

    def after_create_session(self, session, coord):
        self.calls.append("after_create_session")
        self.start_step = session.run(self.global_step)

    def before_run(self, run_context):
        self.calls.append("before_run")
        return tf.train.SessionRunArgs({"gs": self.global_step})

    def after_run(self, run_context, run_values):
        self.calls.append("after_run")
        self.steps.append(int(run_values.results["gs"]))

    def end(self, session):
        self.calls.append("end")
        self.end_step = session.run(self.global_step)


def train_fn(toy_data, batch=16):
    x, y = toy_data
    return dataset_input_fn(x, y, batch, repeat=True)


def test_protocol_order_and_step_numbers(tmp_path, toy_data):
    hook = RecordingHook()
    est = make_estimator(tmp_path)
    est.train(train_fn(toy_data), steps=3, hooks=[hook])
    # tf.estimator's protocol, call for call (the fetches are learnt without a probe).
    assert hook.calls == [
        "begin", "after_create_session",
        "before_run", "after_run", "before_run", "after_run", "before_run", "after_run",
        "end",
    ]  # fmt: skip
    assert hook.start_step == 0 and hook.end_step == 3
    # a fetched variable is read as the step starts (tensorflow-estimator 2.15.1: [0, 1, 2])
    assert hook.steps == [0, 1, 2]
    hook.calls.clear()
    est.train(train_fn(toy_data), steps=2, hooks=[hook])  # the same hook object again
    assert hook.calls == [
        "begin", "after_create_session",
        "before_run", "after_run", "before_run", "after_run", "end",
    ]  # fmt: skip
    assert hook.start_step == 3 and hook.steps[-2:] == [3, 4] and hook.end_step == 5


def test_stop_at_step_hook(tmp_path, toy_data):
    est = make_estimator(tmp_path)
    est.train(train_fn(toy_data), hooks=[tf.train.StopAtStepHook(num_steps=7)])
    assert est.get_variable_value("global_step") == 7
    est.train(train_fn(toy_data), hooks=[tf.train.StopAtStepHook(last_step=10)])
    assert est.get_variable_value("global_step") == 10


def test_logging_tensor_hook_from_the_model_fn_logs_by_tensor_and_name(tmp_path, toy_data, caplog):
    def model_fn(features, labels, mode, params):
        spec = classifier_model_fn(features, labels, mode, params)
        if mode != estimator.ModeKeys.TRAIN:
            return spec
        doubled = tf.identity(spec.loss * 2.0, name="doubled_loss")
        hook = estimator.LoggingTensorHook(
            {"loss": spec.loss, "doubled": "doubled_loss:0"}, every_n_iter=2
        )
        del doubled
        return spec._replace(training_hooks=[hook])

    est = make_estimator(tmp_path, model_fn)
    with caplog.at_level(logging.INFO):
        est.train(train_fn(toy_data), steps=5)
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("doubled = ")]
    assert len(lines) == 3  # iterations 0, 2 and 4
    doubled, loss = (float(p.split(" = ")[1]) for p in lines[0].split(", "))
    assert doubled == pytest.approx(2 * loss, rel=1e-5)


class FetchByVariableNameHook(tf.train.SessionRunHook):
    """Fetches variables by their TF1 names, as TF1-era hooks did with ref variables."""

    def __init__(self, names):
        self.names, self.seen = names, []

    def begin(self):
        self.global_step = tf.train.get_global_step()

    def before_run(self, run_context):
        fetches = dict(self.names)
        fetches["by_object"] = self.global_step
        return tf.train.SessionRunArgs(fetches)

    def after_run(self, run_context, run_values):
        self.seen.append({k: np.array(v) for k, v in run_values.results.items()})


def test_hooks_fetch_variables_by_name(tmp_path, toy_data):
    # tf.estimator 2.15 fetched the resource *handle* for "global_step:0"; the values are
    # what such TF1 code meant, so names give the variable's value here.
    hook = FetchByVariableNameHook({"step": "global_step:0", "bias": "dense_1/bias:0"})
    logging_hook = estimator.LoggingTensorHook({"step": "global_step"}, every_n_iter=1)
    est = make_estimator(tmp_path)
    est.train(train_fn(toy_data), steps=3, hooks=[hook, logging_hook])
    assert [int(s["step"]) for s in hook.seen] == [int(s["by_object"]) for s in hook.seen]
    assert len(hook.seen) == 3
    assert hook.seen[0]["bias"].shape == (3,)
    assert not np.allclose(hook.seen[0]["bias"], hook.seen[-1]["bias"])  # it trains
    with pytest.raises(ValueError, match="not in the model_fn's graph"):
        est.train(train_fn(toy_data), steps=1, hooks=[FetchByVariableNameHook({"x": "nope:0"})])


class GlobalStepInBeforeRunHook(estimator.SessionRunHook):
    """Looks the step up in before_run, as hooks written against MonitoredSession did."""

    def __init__(self):
        self.seen = []

    def before_run(self, run_context):
        return estimator.SessionRunArgs(tf.train.get_global_step())

    def after_run(self, run_context, run_values):
        self.seen.append(int(run_values.results))


def test_the_model_graph_is_the_default_graph_in_before_run(tmp_path, toy_data):
    hook = GlobalStepInBeforeRunHook()
    make_estimator(tmp_path).train(train_fn(toy_data), steps=4, hooks=[hook])
    assert hook.seen == [0, 1, 2, 3]  # the step each run starts from, as 2.15.1 read it


def test_nan_tensor_hook_raises_and_keeps_the_last_good_checkpoint(tmp_path, toy_data):
    def model_fn(features, labels, mode, params):
        spec = classifier_model_fn(features, labels, mode, params)
        gs = tf.train.get_global_step()
        bad_loss = tf.where(gs >= 3, np.nan, 1.0) * spec.loss
        return spec._replace(training_hooks=[tf.train.NanTensorHook(bad_loss)])

    config = estimator.RunConfig(model_dir=str(tmp_path), save_checkpoints_steps=2)
    est = estimator.Estimator(model_fn, config=config, params={})
    with pytest.raises(tf.train.NanLossDuringTrainingError):
        est.train(train_fn(toy_data), steps=10)
    latest = tf.train.latest_checkpoint(str(tmp_path))
    assert latest.endswith("model.ckpt-2")  # no checkpoint of the NaN state
    assert np.isfinite(tf.train.load_variable(latest, "dense/kernel")).all()


def test_saving_listeners(tmp_path, toy_data):
    class Listener(tf.train.CheckpointSaverListener):
        def __init__(self):
            self.events = []

        def begin(self):
            self.events.append("begin")

        def before_save(self, session, step):
            self.events.append(("before_save", step))

        def after_save(self, session, step):
            self.events.append(("after_save", step))
            return step >= 4  # stops training

        def end(self, session, step):
            self.events.append(("end", step))

    listener = Listener()
    config = estimator.RunConfig(model_dir=str(tmp_path), save_checkpoints_steps=2)
    est = estimator.Estimator(classifier_model_fn, config=config, params={})
    est.train(train_fn(toy_data), steps=20, saving_listeners=[listener])
    assert listener.events == [
        "begin", ("before_save", 0), ("after_save", 0), ("before_save", 2), ("after_save", 2),
        ("before_save", 4), ("after_save", 4), ("end", 4),
    ]  # fmt: skip
    assert est.get_variable_value("global_step") == 4


def test_saving_listeners_need_a_checkpoint_saver(tmp_path, toy_data):
    config = estimator.RunConfig(
        model_dir=str(tmp_path), save_checkpoints_steps=None, save_checkpoints_secs=None
    )
    est = estimator.Estimator(classifier_model_fn, config=config, params={})
    with pytest.raises(ValueError, match="There should be a CheckpointSaverHook"):
        est.train(
            train_fn(toy_data), steps=1, saving_listeners=[tf.train.CheckpointSaverListener()]
        )


class EventListener(tf.train.CheckpointSaverListener):
    def __init__(self):
        self.events = []

    def begin(self):
        self.events.append("begin")

    def after_save(self, session, step):
        self.events.append(step)

    def end(self, session, step):
        self.events.append(("end", step))


def _checkpoint_steps(directory, basename="model.ckpt"):
    state = tf.train.get_checkpoint_state(str(directory))
    return [int(p.rsplit("-", 1)[1]) for p in state.all_model_checkpoint_paths]


def test_checkpoint_saver_hook_replaces_the_default_saver(tmp_path, toy_data):
    # As in tf.estimator: a CheckpointSaverHook among the hooks is *the* saver (its
    # directory, basename and cadence); saving_listeners are added to it.
    own, extra = EventListener(), EventListener()
    hook = tf.train.CheckpointSaverHook(
        str(tmp_path / "ckpts"), save_steps=3, checkpoint_basename="snap", listeners=[own]
    )
    config = estimator.RunConfig(
        model_dir=str(tmp_path / "model"), save_checkpoints_steps=None, save_checkpoints_secs=None
    )
    est = estimator.Estimator(classifier_model_fn, config=config, params={})
    est.train(train_fn(toy_data), steps=7, hooks=[hook], saving_listeners=[extra])
    assert own.events == extra.events == ["begin", 0, 3, 6, 7, ("end", 7)]
    assert _checkpoint_steps(tmp_path / "ckpts") == [0, 3, 6, 7]
    assert (tmp_path / "ckpts" / "snap-7.index").exists()
    assert tf.train.load_variable(str(tmp_path / "ckpts" / "snap-7"), "global_step") == 7
    assert not list((tmp_path / "model").glob("*.index"))  # no second, default saver


def test_checkpoint_saver_hook_from_the_model_fn_spec(tmp_path, toy_data):
    model_dir = str(tmp_path)

    def model_fn(features, labels, mode, params):
        spec = classifier_model_fn(features, labels, mode, params)
        saver = tf.train.CheckpointSaverHook(model_dir, save_steps=2)
        return spec._replace(training_chief_hooks=[saver])

    config = estimator.RunConfig(model_dir=model_dir, save_checkpoints_steps=100)
    est = estimator.Estimator(model_fn, config=config, params={})
    est.train(train_fn(toy_data), steps=5)
    assert _checkpoint_steps(tmp_path) == [0, 2, 4, 5]
    with pytest.raises(NotImplementedError, match="2 CheckpointSaverHooks were given"):
        est.train(
            train_fn(toy_data),
            steps=1,
            hooks=[tf.train.CheckpointSaverHook(model_dir, save_steps=2)],
        )
    assert _checkpoint_steps(tmp_path) == [0, 2, 4, 5]


def test_bad_hooks_are_rejected(tmp_path, toy_data):
    est = make_estimator(tmp_path)
    with pytest.raises(TypeError, match="Hooks must be a SessionRunHook or a keras"):
        est.train(train_fn(toy_data), steps=1, hooks=[object()])
    with pytest.raises(
        TypeError, match="saving_listeners must be a list of CheckpointSaverListener"
    ):
        est.train(train_fn(toy_data), steps=1, saving_listeners=["x"])


def test_hook_raising_in_after_run_keeps_model_dir_resumable(tmp_path, toy_data):
    class Boom(tf.train.SessionRunHook):
        def after_run(self, run_context, run_values):
            raise RuntimeError("hook failed")

    est = make_estimator(tmp_path)
    est.train(train_fn(toy_data), steps=2)
    with pytest.raises(RuntimeError, match="hook failed"):
        est.train(train_fn(toy_data), steps=2, hooks=[Boom()])
    assert tf.train.latest_checkpoint(str(tmp_path)).endswith("model.ckpt-2")
    est.train(train_fn(toy_data), steps=1)  # resumes from the last good checkpoint (2)
    assert est.get_variable_value("global_step") == 3


def test_stock_hooks_are_reexported():
    for name in [
        "LoggingTensorHook",
        "StopAtStepHook",
        "NanTensorHook",
        "StepCounterHook",
        "SummarySaverHook",
        "CheckpointSaverHook",
        "CheckpointSaverListener",
        "FinalOpsHook",
        "FeedFnHook",
        "SessionRunHook",
        "SessionRunArgs",
    ]:
        assert getattr(estimator, name) is getattr(tf.train, name)


def test_step_counter_and_summary_saver_hooks_write_event_files(tmp_path, toy_data):
    def model_fn(features, labels, mode, params):
        spec = classifier_model_fn(features, labels, mode, params)
        tf.summary.scalar("my_loss", spec.loss)
        tf.summary.merge_all()
        return spec

    out = str(tmp_path / "hook_events")
    counter = tf.train.StepCounterHook(every_n_steps=2, output_dir=out)
    # The usual TF1 wiring: the summary op is the merged summaries of the model_fn's graph.
    saver = tf.train.SummarySaverHook(
        save_steps=2, output_dir=out, scaffold=tf.train.Scaffold(summary_op="Merge/MergeSummary:0")
    )

    est = make_estimator(tmp_path / "m", model_fn)
    est.train(train_fn(toy_data), steps=5, hooks=[counter, saver])
    tags = {}
    for path in tf.io.gfile.glob(out + "/events.*"):
        for event in tf.train.summary_iterator(path):
            for value in event.summary.value:
                tags.setdefault(value.tag, []).append(event.step)
    # SummarySaverHook re-reads the global step after the step (session.run), as in TF1
    assert tags["my_loss"] == [1, 3, 5]
    assert "global_step/sec" in tags


def test_final_ops_hook_gets_the_last_values(tmp_path, toy_data):
    def model_fn(features, labels, mode, params):
        spec = classifier_model_fn(features, labels, mode, params)
        hook = tf.train.FinalOpsHook({"loss": spec.loss})
        holder.append(hook)
        return spec._replace(training_hooks=[hook])

    holder = []
    est = make_estimator(tmp_path, model_fn)
    est.train(train_fn(toy_data), steps=3)
    assert np.isfinite(holder[-1].final_ops_values["loss"])


def test_feed_fn_hook_is_reported_as_unsupported(tmp_path, toy_data):
    est = make_estimator(tmp_path)
    with pytest.raises(NotImplementedError, match="FeedFnHook is not supported"):
        est.train(train_fn(toy_data), steps=1, hooks=[tf.train.FeedFnHook(lambda: {})])


def test_evaluation_and_prediction_hooks(tmp_path, toy_data):
    x, y = toy_data

    def model_fn(features, labels, mode, params):
        spec = classifier_model_fn(features, labels, mode, params)
        if mode == estimator.ModeKeys.EVAL:
            return spec._replace(evaluation_hooks=[eval_hook])
        if mode == estimator.ModeKeys.PREDICT:
            return spec._replace(prediction_hooks=[predict_hook])
        return spec

    class Tensors(tf.train.SessionRunHook):
        """Fetches the batch size of a hidden layer's output, found by name."""

        def __init__(self):
            self.sizes, self.calls = [], []

        def begin(self):
            self.calls.append("begin")
            relu = tf.get_default_graph().get_tensor_by_name("dense/Relu:0")
            self.tensor = tf.shape(relu)[0]

        def before_run(self, run_context):
            return tf.train.SessionRunArgs(self.tensor)

        def after_run(self, run_context, run_values):
            self.sizes.append(int(run_values.results))

        def end(self, session):
            self.calls.append("end")

    eval_hook, predict_hook = Tensors(), Tensors()
    est = make_estimator(tmp_path, model_fn)
    est.train(dataset_input_fn(x, y, 16, repeat=True), steps=2)
    result = est.evaluate(dataset_input_fn(x, y, 100))
    assert eval_hook.sizes == [100, 100, 56] and eval_hook.calls[-1] == "end"
    assert result["global_step"] == 2 and 0 <= result["accuracy"] <= 1
    predictions = list(est.predict(dataset_input_fn(x, batch_size=100)))
    assert len(predictions) == 256 and predict_hook.sizes == [100, 100, 56]
    user_hook = Tensors()
    est.evaluate(dataset_input_fn(x, y, 128), hooks=[user_hook])
    assert user_hook.sizes == [128, 128]


def test_keras_callbacks_in_hooks(tmp_path, toy_data):
    import keras

    seen = {"batches": [], "losses": [], "events": []}

    class Recorder(keras.callbacks.Callback):
        def on_train_begin(self, logs=None):
            seen["events"].append("train_begin")

        def on_train_batch_end(self, batch, logs=None):
            seen["batches"].append(batch)
            seen["losses"].append(logs["loss"])
            if len(seen["batches"]) == 4:
                self.model.stop_training = True

        def on_train_end(self, logs=None):
            seen["events"].append("train_end")

        def on_test_end(self, logs=None):
            seen["events"].append(("test_end", round(logs["accuracy"], 6)))

    est = make_estimator(tmp_path)
    est.train(train_fn(toy_data), steps=10, hooks=[Recorder()])
    assert seen["batches"] == [0, 1, 2, 3]  # stop_training ends training after the step
    assert all(np.isfinite(seen["losses"]))
    assert est.get_variable_value("global_step") == 4
    x, y = toy_data
    result = est.evaluate(dataset_input_fn(x, y, 64), hooks=[Recorder()])
    assert seen["events"] == [
        "train_begin",
        "train_end",
        ("test_end", round(result["accuracy"], 6)),
    ]

    class PredictRecorder(keras.callbacks.Callback):
        def on_predict_begin(self, logs=None):
            seen["events"].append("predict_begin")

        def on_predict_batch_end(self, batch, logs=None):
            # As in model.predict: {"outputs": predictions}, which Keras flattens for dicts.
            seen["events"].append(("batch", batch, len(logs["classes"])))
            if batch == 1:
                self.model.stop_predicting = True

        def on_predict_end(self, logs=None):
            seen["events"].append("predict_end")

    seen["events"].clear()
    outputs = list(est.predict(dataset_input_fn(x, batch_size=100), hooks=[PredictRecorder()]))
    assert len(outputs) == 200  # stop_predicting ends predict after the second batch
    assert seen["events"] == ["predict_begin", ("batch", 0, 100), ("batch", 1, 100), "predict_end"]


def test_logging_hook_steps_run_in_chunks_and_each_call_gets_its_hook(tmp_path, toy_data, caplog):
    calls = []

    def model_fn(features, labels, mode, params):
        calls.append(mode)
        spec = classifier_model_fn(features, labels, mode, params)
        hook = estimator.LoggingTensorHook({"step_loss": spec.loss}, every_n_iter=10)
        return spec._replace(training_hooks=[hook])

    est = make_estimator(tmp_path, model_fn)
    with caplog.at_level(logging.INFO):
        est.train(train_fn(toy_data), steps=25)
        est.train(train_fn(toy_data), steps=25)
    logged = [r.getMessage() for r in caplog.records if r.getMessage().startswith("step_loss = ")]
    assert len(logged) == 6  # iterations 0, 10, 20 of each call
    # The EstimatorSpec carries a hook made in the model_fn: as in 2.15, each call calls the
    # model_fn again and gets a fresh hook (tests/runtime/test_call_contracts.py).
    assert calls == [estimator.ModeKeys.TRAIN, estimator.ModeKeys.TRAIN]
    assert est.get_variable_value("global_step") == 50


def test_logging_tensor_hook_at_end_logs_the_final_step(tmp_path, toy_data, caplog):
    def model_fn(features, labels, mode, params):
        spec = classifier_model_fn(features, labels, mode, params)
        first_x = tf.identity(features["x"][0, 0], name="first_x")
        hook = estimator.LoggingTensorHook({"first_x": first_x}, every_n_iter=100, at_end=True)
        return spec._replace(training_hooks=[hook])

    x, y = toy_data
    est = make_estimator(tmp_path, model_fn)
    with caplog.at_level(logging.INFO):
        est.train(dataset_input_fn(x, y, 16), steps=7)  # batches of 16, not shuffled
    logged = [r.getMessage() for r in caplog.records if r.getMessage().startswith("first_x = ")]
    assert len(logged) == 2  # iteration 0, then at_end with the last step's value
    assert float(logged[0].split(" = ")[1]) == pytest.approx(x[0, 0], rel=1e-5)
    assert float(logged[1].split(" = ")[1].split()[0]) == pytest.approx(x[6 * 16, 0], rel=1e-5)


def test_in_memory_evaluator_hook_evaluates_current_variables(tmp_path, toy_data):
    x, y = toy_data
    config = estimator.RunConfig(
        model_dir=str(tmp_path), save_checkpoints_steps=None, save_checkpoints_secs=None
    )
    est = estimator.Estimator(classifier_model_fn, config=config, params={})
    hook = estimator.experimental.InMemoryEvaluatorHook(
        est, dataset_input_fn(x, y, 64), every_n_iter=10
    )
    est.train(train_fn(toy_data), steps=30, hooks=[hook])
    # no checkpoint exists: the evaluations saw the training variables themselves
    assert tf.train.latest_checkpoint(str(tmp_path)) is None
    assert [r["global_step"] for r in hook.results] == [0, 10, 20, 30, 30]
    assert hook.results[-1]["loss"] < hook.results[0]["loss"]
    metrics = estimator.experimental.read_eval_metrics(est.eval_dir())
    assert list(metrics) == [0, 10, 20, 30]
    with pytest.raises(ValueError, match="`every_n_iter` must be a positive integer"):
        estimator.experimental.InMemoryEvaluatorHook(est, dataset_input_fn(x, y), every_n_iter=0)


def test_make_stop_at_checkpoint_step_hook(tmp_path, toy_data, monkeypatch):
    chief = make_estimator(tmp_path / "chief")
    hook = estimator.experimental.make_stop_at_checkpoint_step_hook(chief, last_step=4)
    assert isinstance(hook, tf.train.StopAtStepHook)  # the chief stops at the step itself
    chief.train(train_fn(toy_data), steps=5, hooks=[hook])
    assert chief.get_variable_value("global_step") == 4

    # A worker stops once the chief's checkpoint has reached last_step, not before.
    cluster = '{"chief": ["h:1"], "worker": ["h:2"]}'
    monkeypatch.setenv(
        "TF_CONFIG", f'{{"cluster": {cluster}, "task": {{"type": "worker", "index": 0}}}}'
    )
    worker_config = estimator.RunConfig(model_dir=str(tmp_path / "chief"))
    assert not worker_config.is_chief
    worker_view = estimator.Estimator(classifier_model_fn, config=worker_config, params={})
    monkeypatch.delenv("TF_CONFIG")
    waits = estimator.experimental.make_stop_at_checkpoint_step_hook(
        worker_view, last_step=3, wait_after_file_check_secs=0
    )
    worker = make_estimator(tmp_path / "w")
    worker.train(train_fn(toy_data), steps=10, hooks=[waits])
    assert worker.get_variable_value("global_step") == 3
    too_far = estimator.experimental.make_stop_at_checkpoint_step_hook(
        worker_view, last_step=6, wait_after_file_check_secs=0
    )
    worker.train(train_fn(toy_data), steps=5, hooks=[too_far])  # chief's checkpoint is at 4
    assert worker.get_variable_value("global_step") == 8


def test_hooks_fetching_nothing_run_steps_in_chunks_with_exact_stops(tmp_path, toy_data):
    class CountingStopper(tf.train.SessionRunHook):
        """A hook with its own after_run that fetches nothing and stops after N calls."""

        def __init__(self, stop_after):
            self.calls, self.stop_after = 0, stop_after

        def after_run(self, run_context, run_values):
            self.calls += 1
            if self.calls == self.stop_after:
                run_context.request_stop()

    class SessionReader(tf.train.SessionRunHook):
        def begin(self):
            self.global_step = tf.train.get_global_step()
            self.seen = []

        def after_run(self, run_context, run_values):
            self.seen.append(int(run_context.session.run(self.global_step)))

    traced = []

    def model_fn(features, labels, mode, params):
        traced.append(mode)
        return classifier_model_fn(features, labels, mode, params)

    config = estimator.RunConfig(model_dir=str(tmp_path), log_step_count_steps=None)
    est = estimator.Estimator(model_fn, config=config, params={})
    stopper = CountingStopper(stop_after=257)
    est.train(train_fn(toy_data), steps=1000, hooks=[stopper])
    assert stopper.calls == 257 and est.get_variable_value("global_step") == 257
    # A hook reading the session in after_run sees each step's own value.
    reader = SessionReader()
    est.train(train_fn(toy_data), steps=5, hooks=[reader])
    assert reader.seen == [258, 259, 260, 261, 262]


def test_hooks_walked_ahead_run_their_after_run_eagerly_as_after_a_real_step(tmp_path, toy_data):
    class EagerAfterRun(tf.train.SessionRunHook):
        """Computes with TensorFlow in after_run (eagerly, as a TF2-era hook does)."""

        def __init__(self):
            self.totals = []

        def after_run(self, run_context, run_values):
            self.totals.append(float(tf.reduce_sum(tf.ones([2]))))

    hook = EagerAfterRun()
    config = estimator.RunConfig(model_dir=str(tmp_path), log_step_count_steps=None)
    estimator.Estimator(classifier_model_fn, config=config, params={}).train(
        train_fn(toy_data), steps=40, hooks=[hook]
    )
    assert hook.totals == [2.0] * 40  # steps 2-40 walked ahead of compiled chunks


def test_steps_per_execution_one_shows_hooks_each_steps_state(tmp_path, toy_data):
    class ReadsTheVariable(tf.train.SessionRunHook):
        """Fetches nothing; reads the global step variable itself in after_run."""

        def begin(self):
            self.variable, self.seen = tf.train.get_global_step(), []

        def after_run(self, run_context, run_values):
            self.seen.append(int(self.variable.numpy()))

    grouped, exact = ReadsTheVariable(), ReadsTheVariable()
    config = estimator.RunConfig(model_dir=str(tmp_path / "a"), log_step_count_steps=None)
    estimator.Estimator(classifier_model_fn, config=config, params={}).train(
        train_fn(toy_data), steps=6, hooks=[grouped]
    )
    # Grouped: after one probing step, the hook is walked ahead of each compiled chunk.
    assert grouped.seen[0] == 1 and grouped.seen[1:] == [1] * 5
    config = config.replace(model_dir=str(tmp_path / "b"), steps_per_execution=1)
    estimator.Estimator(classifier_model_fn, config=config, params={}).train(
        train_fn(toy_data), steps=6, hooks=[exact]
    )
    assert exact.seen == [1, 2, 3, 4, 5, 6]
    with pytest.raises(ValueError, match="steps_per_execution must be a positive integer"):
        estimator.RunConfig(steps_per_execution=0)
