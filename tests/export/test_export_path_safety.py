"""Exports stay in their directory: assets_extra keys and exporter names cannot reach outside
it, and export garbage collection never follows a link (real files, links under tmp_path)."""

import os

import pytest
import tensorflow.compat.v1 as tf
from helpers import dataset_input_fn, make_estimator

import keras_estimator as estimator
from keras_estimator import export
from keras_estimator.export.exporters import (
    BestExporter,
    FinalExporter,
    LatestExporter,
    garbage_collect_exports,
)


def receiver_fn():
    x = tf.placeholder(tf.float32, [None, 8], name="x")
    return estimator.export.ServingInputReceiver({"x": x}, {"x": x})


def tree(root):
    return sorted(
        os.path.relpath(os.path.join(folder, name), root)
        for folder, dirs, files in os.walk(root)
        for name in files + [d for d in dirs if os.path.islink(os.path.join(folder, d))]
    )


def test_assets_extra_keys_outside_the_export_are_refused(tmp_path, toy_data):
    x, y = toy_data
    est = make_estimator(tmp_path / "model")
    est.train(dataset_input_fn(x, y, 32, repeat=True), steps=2)
    source = tmp_path / "vocab.txt"
    source.write_text("a\nb\n")
    fn = export.build_raw_serving_input_receiver_fn({"x": tf.TensorSpec([None, 8], tf.float32)})
    before = tree(tmp_path)
    base = tmp_path / "exports"
    for key in ["../../../escaped.txt", str(tmp_path / "absolute.txt"), "sub/../../x.txt", ""]:
        with pytest.raises(ValueError) as info:
            est.export_saved_model(str(base), fn, assets_extra={key: str(source)})
        message = str(info.value)
        assert "not a relative path inside the export" in message
        assert f"Received: assets_extra key={key!r}" in message
    assert tree(tmp_path) == before  # nothing written anywhere
    path = est.export_saved_model(str(base), fn, assets_extra={"sub/v.txt": str(source)})
    assert (open(os.path.join(path.decode(), "assets.extra", "sub", "v.txt")).read()) == "a\nb\n"


@pytest.mark.parametrize("name", ["../x", "a/b", "..", ".", "/abs/x"])
@pytest.mark.parametrize("make", [LatestExporter, FinalExporter, BestExporter])
def test_exporter_names_reaching_outside_export_are_refused(make, name):
    with pytest.raises(ValueError) as info:
        make(name, receiver_fn)
    message = str(info.value)
    assert "not a single directory name" in message and f"Received: name={name!r}" in message


def test_export_garbage_collection_never_follows_a_link(tmp_path):
    outside, inner_target = tmp_path / "outside", tmp_path / "inner_target"
    for folder in (outside, inner_target):
        (folder / "sub").mkdir(parents=True)
        (folder / "keep.txt").write_text("keep")
        (folder / "sub" / "deep.txt").write_text("keep")
    base = tmp_path / "export" / "latest"
    base.mkdir(parents=True)
    os.symlink(outside, base / "1700000001")  # the oldest "export" is a link
    (base / "1700000002" / "variables").mkdir(parents=True)  # a real export ...
    (base / "1700000002" / "saved_model.pb").write_bytes(b"")
    os.symlink(inner_target, base / "1700000002" / "assets")  # ... with a link inside
    (base / "1700000003").write_text("a file, not an export")
    (base / "1700000004").mkdir()
    (base / "1700000005").mkdir()

    deleted = garbage_collect_exports(str(base), 1)

    assert deleted == [str(base / "1700000002"), str(base / "1700000004")]
    assert tree(outside) == ["keep.txt", os.path.join("sub", "deep.txt")]
    assert tree(inner_target) == ["keep.txt", os.path.join("sub", "deep.txt")]
    assert os.path.islink(base / "1700000001")  # left alone, with a warning
    assert sorted(os.listdir(base)) == ["1700000001", "1700000003", "1700000005"]
