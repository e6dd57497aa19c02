"""ListenedSaver as a unit: listeners around each save, graph.pbtxt with the call's first
save and a `.meta` inside every save, nothing written for a call that never saved."""

import tensorflow as tf

from keras_estimator.checkpoint.checkpoint_files import CheckpointWriter
from keras_estimator.checkpoint.graph_files import StepGraph, traced_step
from keras_estimator.runtime.training_loop import ListenedSaver


class _Listener(tf.compat.v1.train.CheckpointSaverListener):
    def __init__(self, stop_at=None):
        self.calls, self.stop_at = [], stop_at

    def before_save(self, session, global_step_value):
        self.calls.append(("before", global_step_value))

    def after_save(self, session, global_step_value):
        self.calls.append(("after", global_step_value))
        return global_step_value == self.stop_at

    def end(self, session, global_step_value):
        self.calls.append(("end", global_step_value))


def _saver(model_dir, listener, with_meta=True):
    variables = {"w": tf.Variable(1.0, name="w")}
    writer = CheckpointWriter(str(model_dir), variables, 5, None)
    saver = ListenedSaver(writer, [listener], session=None, save_steps=10, save_secs=None)
    saver.write_graph(StepGraph(traced_step(None, variables)), with_meta=with_meta)
    return saver


def test_listeners_surround_each_save_and_may_stop_training(tmp_path):
    listener = _Listener(stop_at=20)
    saver = _saver(tmp_path, listener)
    assert saver.save(10) is False
    assert saver.save(20) is True  # the listener asked to stop
    saver.end(20)
    assert listener.calls == [
        ("before", 10), ("after", 10), ("before", 20), ("after", 20), ("end", 20)
    ]  # fmt: skip
    assert tf.train.latest_checkpoint(str(tmp_path)).endswith("model.ckpt-20")


def test_the_first_save_writes_the_graph_and_every_save_its_meta(tmp_path):
    saver = _saver(tmp_path, _Listener())
    assert not (tmp_path / "graph.pbtxt").exists()
    saver.save(0)
    assert (tmp_path / "graph.pbtxt").exists() and (tmp_path / "model.ckpt-0.meta").exists()
    saver.save(10)
    assert (tmp_path / "model.ckpt-10.meta").exists()
    without_meta = _saver(tmp_path / "plain", _Listener(), with_meta=False)
    without_meta.save(0)
    assert not (tmp_path / "plain" / "model.ckpt-0.meta").exists()


def test_a_call_that_fails_before_saving_leaves_no_graph_file(tmp_path):
    saver = _saver(tmp_path, _Listener())
    saver.abort()
    assert not (tmp_path / "graph.pbtxt").exists()
