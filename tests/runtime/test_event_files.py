"""ScalarReader: event files' scalars by step, each file read again only when it changed."""

import tensorflow as tf

from keras_estimator.runtime import event_files
from keras_estimator.runtime.event_files import ScalarReader, read_scalars


def _write(directory, step, **values):
    writer = tf.summary.create_file_writer(str(directory))
    with writer.as_default():
        for tag, value in values.items():
            tf.summary.scalar(tag, value, step=step)
    writer.close()


def test_a_reader_reads_a_changed_file_again_and_keeps_an_unchanged_one(tmp_path, monkeypatch):
    _write(tmp_path, 1, loss=2.0)
    reader = ScalarReader()
    assert reader.read(str(tmp_path)) == {1: {"loss": 2.0}}
    (path,) = tmp_path.iterdir()
    read = []
    original = event_files._read_file
    monkeypatch.setattr(event_files, "_read_file", lambda p: read.append(p) or original(p))
    assert reader.read(str(tmp_path)) == {1: {"loss": 2.0}}
    assert read == []  # unchanged: not read again
    _write(tmp_path, 2, loss=1.0, accuracy=0.5)
    assert reader.read(str(tmp_path)) == {1: {"loss": 2.0}, 2: {"loss": 1.0, "accuracy": 0.5}}
    assert len(read) == 1  # only the new file
    assert read_scalars(str(tmp_path / "missing")) == {}
