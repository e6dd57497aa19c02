"""LatestExporter, FinalExporter, BestExporter and export garbage collection."""

import functools
import os

import numpy as np
import pytest
import tensorflow.compat.v1 as tf
from helpers import classifier_model_fn, dataset_input_fn, make_estimator

import keras_estimator as estimator
from keras_estimator.export.exporters import (
    BestExporter,
    Exporter,
    FinalExporter,
    LatestExporter,
    garbage_collect_exports,
)
from keras_estimator.training.train_and_evaluate import EvalSpec, TrainSpec, train_and_evaluate


class DirOnlyEstimator(estimator.Estimator):
    """A real Estimator whose export_saved_model only creates `<base>/<timestamp>/`.

    For the exporters' own rules (when to export, what to keep); the SavedModel itself is
    covered by the end-to-end tests below.
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.export_calls = []
        self._version = 1_700_000_000

    def export_saved_model(
        self,
        export_dir_base,
        serving_input_receiver_fn,
        assets_extra=None,
        as_text=False,
        checkpoint_path=None,
    ):
        self._version += 1  # one a second, as timestamps would be
        path = os.path.join(export_dir_base, str(self._version))
        os.makedirs(path)
        self.export_calls.append(
            dict(
                export_dir_base=export_dir_base,
                serving_input_receiver_fn=serving_input_receiver_fn,
                assets_extra=assets_extra,
                as_text=as_text,
                checkpoint_path=checkpoint_path,
            )
        )
        return path.encode()


def receiver_fn():
    x = tf.placeholder(tf.float32, [None, 8], name="x")
    return estimator.export.ServingInputReceiver({"x": x}, {"x": x})


def dir_only_estimator(model_dir):
    return DirOnlyEstimator(classifier_model_fn, model_dir=str(model_dir), params={})


def versions(path):
    return sorted(name for name in os.listdir(path) if name.isdigit())


def export_once(exporter, est, loss, final=False, **metrics):
    path = os.path.join(est.model_dir, "export", exporter.name)
    eval_result = {"loss": loss, "global_step": 1, **metrics}
    return exporter.export(est, path, "ckpt", eval_result, final)


# -- validation -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "make, message",
    [
        (
            lambda: LatestExporter("l", receiver_fn, exports_to_keep=0),
            "`exports_to_keep`, if provided, must be positive number",
        ),
        (
            lambda: BestExporter(serving_input_receiver_fn=receiver_fn, exports_to_keep=-1),
            "`exports_to_keep`, if provided, must be a positive number. Got -1",
        ),
        (lambda: BestExporter(compare_fn=None), "`compare_fn` must not be None."),
        (
            lambda: BestExporter(compare_fn=lambda a, b: True),
            "must include best_eval_result argument.",
        ),
        (
            lambda: BestExporter(compare_fn=lambda best_eval_result: True),
            "must include current_eval_result argument.",
        ),
        (
            lambda: BestExporter(
                compare_fn=lambda best_eval_result, current_eval_result, key: True
            ),
            "has following not expected args: ['key']",
        ),
    ],
)
def test_validation_messages(make, message):
    with pytest.raises(ValueError) as info:
        make()
    assert message in str(info.value)


def test_names_and_accepted_compare_fns():
    def by_key(best_eval_result, current_eval_result, key):
        return current_eval_result[key] > best_eval_result[key]

    exporters = [
        LatestExporter("latest", receiver_fn, exports_to_keep=None),
        FinalExporter("final", receiver_fn),
        BestExporter(compare_fn=functools.partial(by_key, key="accuracy")),
    ]
    assert [e.name for e in exporters] == ["latest", "final", "best_exporter"]
    assert EvalSpec(lambda: None, exporters=exporters).exporters == tuple(exporters)


def test_exporter_is_abstract():
    with pytest.raises(TypeError):
        Exporter()

    class OnlyName(Exporter):
        name = "only_name"

    with pytest.raises(TypeError):
        OnlyName()


# -- garbage collection ---------------------------------------------------------------------
def test_garbage_collect_keeps_the_newest_timestamped_exports(tmp_path):
    stamps = [str(1_700_000_000 + i) for i in (5, 1, 7, 3, 2)]
    for name in [*stamps, "temp-1700000009", "12345", "not_a_version"]:
        (tmp_path / name).mkdir()
    (tmp_path / stamps[0] / "saved_model.pb").write_bytes(b"")  # a full export goes too
    deleted = garbage_collect_exports(str(tmp_path), 2)
    assert sorted(os.path.basename(p) for p in deleted) == [
        "1700000001",
        "1700000002",
        "1700000003",
    ]
    assert sorted(os.listdir(tmp_path)) == [
        "12345", "1700000005", "1700000007", "not_a_version", "temp-1700000009",
    ]  # fmt: skip
    assert garbage_collect_exports(str(tmp_path), None) == []
    assert garbage_collect_exports(str(tmp_path / "missing"), 1) == []


# -- the exporters' rules, on a real Estimator that only creates directories ----------------
def test_latest_exporter_exports_every_time_and_keeps_the_newest(tmp_path):
    est = dir_only_estimator(tmp_path)
    exporter = LatestExporter(
        "latest", receiver_fn, assets_extra={"a.txt": "/src/a.txt"}, as_text=True, exports_to_keep=2
    )
    results = [export_once(exporter, est, loss) for loss in (3.0, 2.0, 4.0, 1.0)]
    export_dir = os.path.join(str(tmp_path), "export", "latest")
    assert results == [os.path.join(export_dir, str(1_700_000_001 + i)).encode() for i in range(4)]
    assert versions(export_dir) == ["1700000003", "1700000004"]
    assert est.export_calls[0] == dict(
        export_dir_base=export_dir,
        serving_input_receiver_fn=receiver_fn,
        assets_extra={"a.txt": "/src/a.txt"},
        as_text=True,
        checkpoint_path="ckpt",
    )


def test_final_exporter_exports_only_the_final_time(tmp_path):
    est = dir_only_estimator(tmp_path)
    exporter = FinalExporter("final", receiver_fn)
    assert export_once(exporter, est, 1.0, final=False) is None
    assert est.export_calls == []
    assert export_once(exporter, est, 1.0, final=True).endswith(b"1700000001")
    assert versions(os.path.join(str(tmp_path), "export", "final")) == ["1700000001"]


def test_best_exporter_exports_only_improvements(tmp_path):
    est = dir_only_estimator(tmp_path)
    exporter = BestExporter("best", receiver_fn, exports_to_keep=2)
    results = [export_once(exporter, est, loss) for loss in (3.0, 2.0, 2.5, 2.0, 1.0)]
    assert [r is not None for r in results] == [True, True, False, False, True]
    export_dir = os.path.join(str(tmp_path), "export", "best")
    assert versions(export_dir) == ["1700000002", "1700000003"]  # the first was collected


def test_best_exporter_custom_compare_fn(tmp_path):
    seen = []

    def higher_accuracy(best_eval_result, current_eval_result):
        seen.append((best_eval_result["accuracy"], current_eval_result["accuracy"]))
        return current_eval_result["accuracy"] > best_eval_result["accuracy"]

    est = dir_only_estimator(tmp_path)
    exporter = BestExporter("best", receiver_fn, compare_fn=higher_accuracy, exports_to_keep=None)
    exported = [
        export_once(exporter, est, loss=1.0, accuracy=acc) is not None for acc in (0.5, 0.4, 0.7)
    ]
    assert exported == [True, False, True]
    assert seen == [(0.5, 0.4), (0.5, 0.7)]  # the first export compares with nothing


def test_best_exporter_reads_the_best_result_from_eval_event_files(tmp_path, toy_data):
    x, y = toy_data
    trained = dir_only_estimator(tmp_path / "trained")
    trained.train(dataset_input_fn(x, y, 16, repeat=True), steps=3)
    evaluated_loss = float(trained.evaluate(dataset_input_fn(x, y, 64), steps=1)["loss"])

    # As in tf.estimator 2.15, an exporter's first export is always performed, whatever the
    # event files of its model_dir hold ...
    exporter = BestExporter("best", receiver_fn)
    assert export_once(exporter, trained, evaluated_loss + 1.0) is not None
    assert export_once(exporter, trained, evaluated_loss + 2.0) is None

    # ... and when it moves to another model_dir, the best result found there is the one to
    # beat.
    exporter = BestExporter("best", receiver_fn)
    fresh = dir_only_estimator(tmp_path / "fresh")
    assert export_once(exporter, fresh, evaluated_loss + 1.0) is not None
    assert export_once(exporter, trained, evaluated_loss + 0.5) is None
    assert export_once(exporter, trained, evaluated_loss / 2) is not None


def test_best_exporter_without_event_file_pattern_ignores_event_files(tmp_path, toy_data):
    x, y = toy_data
    trained = dir_only_estimator(tmp_path / "trained")
    trained.train(dataset_input_fn(x, y, 16, repeat=True), steps=2)
    loss = float(trained.evaluate(dataset_input_fn(x, y, 64), steps=1)["loss"])
    exporter = BestExporter("best", receiver_fn, event_file_pattern=None)
    assert export_once(exporter, dir_only_estimator(tmp_path / "fresh"), loss + 1.0) is not None
    assert export_once(exporter, trained, loss + 0.5) is not None  # beats the last export


# -- end to end: real SavedModels from train_and_evaluate -----------------------------------
def test_train_and_evaluate_writes_latest_final_and_best_saved_models(tmp_path, toy_data):
    x, y = toy_data
    config = estimator.RunConfig(model_dir=str(tmp_path), save_checkpoints_steps=4)
    est = estimator.Estimator(classifier_model_fn, config=config, params={})
    exporters = [
        LatestExporter("latest", receiver_fn, exports_to_keep=2),
        FinalExporter("final", receiver_fn),
        BestExporter("best", receiver_fn, exports_to_keep=1),
    ]
    metrics, results = train_and_evaluate(
        est,
        TrainSpec(dataset_input_fn(x, y, 16, repeat=True), max_steps=12),
        EvalSpec(dataset_input_fn(x, y, 64), steps=1, throttle_secs=0, exporters=exporters),
    )
    export_root = os.path.join(str(tmp_path), "export")
    assert sorted(os.listdir(export_root)) == ["best", "final", "latest"]
    assert len(versions(os.path.join(export_root, "latest"))) == 2  # 3 exports, 2 kept
    assert len(versions(os.path.join(export_root, "final"))) == 1
    assert len(versions(os.path.join(export_root, "best"))) == 1
    latest, final, best = results  # of the final evaluation (step 12)
    assert metrics["global_step"] == 12
    assert os.path.dirname(latest) == os.path.join(export_root, "latest").encode()
    assert os.path.dirname(final) == os.path.join(export_root, "final").encode()
    for path in (latest, final):
        assert tf.saved_model.contains_saved_model(path.decode())

    # The final export serves the model of the last checkpoint.
    loaded = tf.saved_model.load_v2(final.decode())
    outputs = loaded.signatures["serving_default"](x=tf.constant(x[:4]))
    predicted = [p["classes"] for p in est.predict(dataset_input_fn(x[:4], batch_size=4))]
    assert np.array_equal(outputs["classes"].numpy(), predicted)


def test_latest_exporter_on_a_real_estimator(tmp_path, toy_data):
    x, y = toy_data
    est = make_estimator(tmp_path)
    est.train(dataset_input_fn(x, y, 16, repeat=True), steps=2)
    eval_result = est.evaluate(dataset_input_fn(x, y, 64), steps=1)
    exporter = LatestExporter("latest", receiver_fn)
    export_path = os.path.join(str(tmp_path), "export", "latest")
    result = exporter.export(est, export_path, est.latest_checkpoint(), eval_result, False)
    assert isinstance(result, bytes)
    assert tf.saved_model.contains_saved_model(result.decode())
    assert versions(export_path) == [os.path.basename(result.decode())]
