"""TrainSpec, EvalSpec and train_and_evaluate in local mode (tf.estimator 2.15 contract)."""

import json
import logging
import os

import pytest
import tensorflow.compat.v1 as tf
from helpers import dataset_input_fn, make_estimator

from keras_estimator.experimental import read_eval_metrics, stop_if_higher_hook
from keras_estimator.export.exporters import Exporter
from keras_estimator.training.train_and_evaluate import EvalSpec, TrainSpec, train_and_evaluate


class RecordingExporter(Exporter):
    """Records every call train_and_evaluate makes; writes nothing."""

    def __init__(self, name="rec"):
        self._name, self.calls = name, []

    @property
    def name(self):
        return self._name

    def export(self, estimator, export_path, checkpoint_path, eval_result, is_the_final_export):
        step = eval_result["global_step"]
        self.calls.append(
            (export_path, os.path.basename(checkpoint_path), step, is_the_final_export)
        )
        return f"export-{step}"


def train_input(toy_data, repeat=True):
    x, y = toy_data
    return dataset_input_fn(x, y, 16, repeat=repeat)


def eval_input(toy_data):
    x, y = toy_data
    return dataset_input_fn(x, y, 32)


# -- specs -------------------------------------------------------------------------------
def test_spec_defaults_and_normalised_fields(toy_data):
    exporter = RecordingExporter()
    train_spec = TrainSpec(train_input(toy_data))
    eval_spec = EvalSpec(eval_input(toy_data), exporters=exporter)
    assert (train_spec.max_steps, train_spec.hooks, train_spec.saving_listeners) == (None, (), ())
    assert (eval_spec.steps, eval_spec.name, eval_spec.hooks) == (100, None, ())
    assert (eval_spec.start_delay_secs, eval_spec.throttle_secs) == (120, 600)
    assert eval_spec.exporters == (exporter,)  # a single Exporter becomes a tuple
    assert isinstance(train_spec, tuple) and train_spec._replace(max_steps=5).max_steps == 5


@pytest.mark.parametrize(
    "make, error, message",
    [
        (lambda f: TrainSpec(1), TypeError, "`input_fn` must be callable, given: 1"),
        (lambda f: TrainSpec(f, max_steps=0), ValueError, "Must specify max_steps > 0, given: 0"),
        (lambda f: TrainSpec(f, hooks=[1]), TypeError, "All hooks must be `SessionRunHook`"),
        (
            lambda f: TrainSpec(f, saving_listeners=[1]),
            TypeError,
            "All saving_listeners must be `CheckpointSaverListener` instances, given: 1",
        ),
        (lambda f: EvalSpec(None), TypeError, "`input_fn` must be callable, given: None"),
        (lambda f: EvalSpec(f, steps=0), ValueError, "Must specify steps > 0, given: 0"),
        (lambda f: EvalSpec(f, name=1), TypeError, "`name` must be string, given: 1"),
        (lambda f: EvalSpec(f, hooks=["x"]), TypeError, "All hooks must be `SessionRunHook`"),
        (
            lambda f: EvalSpec(f, start_delay_secs=-1),
            ValueError,
            "Must specify start_delay_secs >= 0, given: -1",
        ),
        (
            lambda f: EvalSpec(f, throttle_secs=-1),
            ValueError,
            "Must specify throttle_secs >= 0, given: -1",
        ),
        (
            lambda f: EvalSpec(f, exporters=5),
            TypeError,
            "`exporters` must be an Exporter, an iterable of Exporter, or `None`, found 5.",
        ),
        (lambda f: EvalSpec(f, exporters=[None]), TypeError, "`exporters` must be an Exporter"),
        (
            lambda f: EvalSpec(f, exporters=[RecordingExporter("a"), RecordingExporter("a")]),
            ValueError,
            "`exporters` must have unique names. Such a name cannot be `None`. All exporter "
            "names: ['a', 'a']",
        ),
        (
            lambda f: EvalSpec(f, exporters=[RecordingExporter("")]),
            ValueError,
            "An Exporter cannot have a name that is `None` or empty.",
        ),
        (
            lambda f: EvalSpec(f, exporters=[RecordingExporter(3)]),
            ValueError,
            "An Exporter must have a string name. Given: <class 'int'>",
        ),
    ],
)
def test_spec_validation_messages(toy_data, make, error, message):
    with pytest.raises(error) as info:
        make(train_input(toy_data))
    assert message in str(info.value)


def test_train_and_evaluate_argument_types(tmp_path, toy_data):
    est = make_estimator(tmp_path, save_checkpoints_steps=2)
    train_spec, eval_spec = TrainSpec(train_input(toy_data)), EvalSpec(eval_input(toy_data))
    # eval_spec is checked first, as in tf.estimator
    with pytest.raises(TypeError, match=r"`eval_spec` must have type `tf.estimator.EvalSpec`"):
        train_and_evaluate(None, None, None)
    with pytest.raises(TypeError, match=r"`estimator` must have type `tf.estimator.Estimator`"):
        train_and_evaluate(object(), train_spec, eval_spec)
    with pytest.raises(TypeError, match=r"`train_spec` must have type `tf.estimator.TrainSpec`"):
        train_and_evaluate(est, (train_spec.input_fn,), eval_spec)
    assert not os.path.exists(os.path.join(tmp_path, "checkpoint"))


# -- the local loop ---------------------------------------------------------------------------
def test_evaluates_and_exports_after_each_checkpoint(tmp_path, toy_data, caplog):
    est = make_estimator(tmp_path, save_checkpoints_steps=5)
    exporter = RecordingExporter()
    eval_spec = EvalSpec(eval_input(toy_data), steps=2, throttle_secs=0, exporters=[exporter])
    with caplog.at_level(logging.INFO, logger="keras_estimator"):
        metrics, exports = train_and_evaluate(
            est, TrainSpec(train_input(toy_data), max_steps=12), eval_spec
        )
    # The checkpoint of step 0 (saved when training starts) is not evaluated.
    export_path = os.path.join(str(tmp_path), "export", "rec")
    assert exporter.calls == [
        (export_path, "model.ckpt-5", 5, False),
        (export_path, "model.ckpt-10", 10, False),
        (export_path, "model.ckpt-12", 12, True),  # reached max_steps: the final export
    ]
    assert metrics["global_step"] == 12 and set(metrics) == {"accuracy", "loss", "global_step"}
    assert exports == ["export-12"]
    assert list(read_eval_metrics(est.eval_dir())) == [5, 10, 12]
    assert "Running training and evaluation locally (non-distributed)." in caplog.messages

    # Already at max_steps: training is skipped and nothing is evaluated, as in tf.estimator.
    again = train_and_evaluate(est, TrainSpec(train_input(toy_data), max_steps=12), eval_spec)
    assert again == (None, None)
    # Resuming evaluates new checkpoints only (not the one it resumes from).
    metrics, _ = train_and_evaluate(est, TrainSpec(train_input(toy_data), max_steps=17), eval_spec)
    assert metrics["global_step"] == 17
    assert [call[2:] for call in exporter.calls[3:]] == [(17, True)]


def test_throttle_secs_skips_checkpoints_but_not_the_final_one(tmp_path, toy_data, caplog):
    est = make_estimator(tmp_path, save_checkpoints_steps=2)
    exporter = RecordingExporter()
    eval_spec = EvalSpec(eval_input(toy_data), steps=1, throttle_secs=600, exporters=exporter)
    with caplog.at_level(logging.INFO, logger="keras_estimator"):
        metrics, _ = train_and_evaluate(
            est, TrainSpec(train_input(toy_data), max_steps=11), eval_spec
        )
    # The first checkpoint after the start is evaluated; the rest wait for the throttle,
    # except the last one, evaluated when training ends.
    assert [call[2:] for call in exporter.calls] == [(2, False), (11, True)]
    assert metrics["global_step"] == 11
    skips = [m for m in caplog.messages if m.startswith("Skip the current checkpoint eval")]
    assert skips[0] == "Skip the current checkpoint eval due to throttle secs (600 secs)."
    assert len(skips) == 5  # checkpoints 4, 6, 8, 10 and 11


def test_exhausted_input_without_max_steps_is_never_the_final_export(tmp_path, toy_data):
    est = make_estimator(tmp_path, save_checkpoints_steps=5)
    exporter = RecordingExporter()
    eval_spec = EvalSpec(eval_input(toy_data), steps=None, throttle_secs=0, exporters=exporter)
    metrics, exports = train_and_evaluate(
        est, TrainSpec(train_input(toy_data, repeat=False)), eval_spec
    )
    # 256 examples / 16 = 16 steps; the last checkpoint (16) is evaluated when training ends
    assert [call[2:] for call in exporter.calls] == [
        (5, False), (10, False), (15, False), (16, False),
    ]  # fmt: skip
    assert metrics["global_step"] == 16 and exports == ["export-16"]


def test_early_stopping_hook_ends_with_a_final_evaluation(tmp_path, toy_data):
    est = make_estimator(tmp_path, save_checkpoints_steps=2)
    # Stops as soon as any evaluation exists (every accuracy is above -1).
    hook = stop_if_higher_hook(est, "accuracy", -1.0, run_every_secs=None, run_every_steps=1)
    exporter = RecordingExporter()
    metrics, exports = train_and_evaluate(
        est,
        TrainSpec(train_input(toy_data), max_steps=100, hooks=[hook]),
        EvalSpec(eval_input(toy_data), steps=1, throttle_secs=0, exporters=exporter),
    )
    last_step = int(est.get_variable_value("global_step"))
    assert last_step < 100
    # The step training stopped at was checkpointed and evaluated; max_steps was not
    # reached, so (as in tf.estimator) no export is the final one.
    assert metrics["global_step"] == last_step
    assert list(read_eval_metrics(est.eval_dir()))[-1] == last_step
    assert exporter.calls[-1][2:] == (last_step, False)
    assert exports == [f"export-{last_step}"]


def test_specs_hooks_listeners_and_eval_name_are_used(tmp_path, toy_data):
    class Counter(tf.train.SessionRunHook):
        def __init__(self):
            self.begins, self.runs = 0, 0

        def begin(self):
            self.begins += 1

        def after_run(self, run_context, run_values):
            self.runs += 1

    class Listener(tf.train.CheckpointSaverListener):
        def __init__(self):
            self.saved = []

        def after_save(self, session, global_step_value):
            self.saved.append(global_step_value)

    train_hook, eval_hook, listener = Counter(), Counter(), Listener()
    est = make_estimator(tmp_path, save_checkpoints_steps=3)
    metrics, exports = train_and_evaluate(
        est,
        TrainSpec(
            train_input(toy_data), max_steps=6, hooks=[train_hook], saving_listeners=[listener]
        ),
        EvalSpec(eval_input(toy_data), steps=2, name="holdout", hooks=[eval_hook], throttle_secs=0),
    )
    assert train_hook.runs == 6
    assert listener.saved == [0, 3, 6]
    assert eval_hook.runs == 4  # two evaluations (steps 3 and 6) of two batches
    assert list(read_eval_metrics(est.eval_dir("holdout"))) == [3, 6]
    assert not os.path.exists(est.eval_dir())
    assert metrics["global_step"] == 6 and exports == []


def test_needs_checkpoints_to_evaluate(tmp_path, toy_data):
    est = make_estimator(tmp_path, save_checkpoints_steps=None, save_checkpoints_secs=None)
    with pytest.raises(ValueError, match="There should be a CheckpointSaverHook to use saving"):
        train_and_evaluate(
            est, TrainSpec(train_input(toy_data), max_steps=3), EvalSpec(eval_input(toy_data))
        )


@pytest.mark.parametrize(
    "task, error, message",
    [
        (
            {"type": "evaluator", "index": 1},
            ValueError,
            "there can only be one `evaluator` task (with task id 0).  Given task id 1",
        ),
    ],
)
def test_distributed_configs_are_refused(tmp_path, toy_data, monkeypatch, task, error, message):
    cluster = {"chief": ["localhost:2222"], "worker": ["localhost:2223"], "ps": ["localhost:2224"]}
    monkeypatch.setenv("TF_CONFIG", json.dumps({"cluster": cluster, "task": task}))
    est = make_estimator(tmp_path, save_checkpoints_steps=2)
    with pytest.raises(error) as info:
        train_and_evaluate(
            est, TrainSpec(train_input(toy_data), max_steps=3), EvalSpec(eval_input(toy_data))
        )
    assert message in str(info.value)
    assert est.latest_checkpoint() is None  # nothing was trained
