"""model_dir as tf.estimator 2.15 left it: graph.pbtxt, the graph in the event file,
`.meta` files with the checkpoints (RunConfig.checkpoint_save_graph_def), evaluation
results in 2.15's key order."""

import os
import shutil

import numpy as np
import pytest
import tensorflow as tf
from google.protobuf import text_format
from helpers import classifier_model_fn, dataset_input_fn, make_estimator

import keras_estimator as estimator
from keras_estimator.checkpoint.checkpoint_files import CheckpointWriteError, CheckpointWriter
from keras_estimator.checkpoint.graph_files import StepGraph, traced_step
from keras_estimator.seam import internals


def _train(model_dir, toy_data, **config):
    x, y = toy_data
    est = make_estimator(model_dir, save_checkpoints_steps=5, keep_checkpoint_max=2, **config)
    return est.train(dataset_input_fn(x, y, 16, repeat=True), steps=12)


def test_graph_pbtxt_meta_files_and_their_garbage_collection(tmp_path, toy_data):
    est = _train(tmp_path, toy_data)
    names = sorted(os.listdir(tmp_path))
    checkpoints = [n for n in names if n.startswith("model.ckpt")]
    # keep_checkpoint_max=2 removed steps 0 and 5 with their .meta files.
    assert checkpoints == [
        "model.ckpt-10.data-00000-of-00001", "model.ckpt-10.index", "model.ckpt-10.meta",
        "model.ckpt-12.data-00000-of-00001", "model.ckpt-12.index", "model.ckpt-12.meta",
    ]  # fmt: skip
    assert "graph.pbtxt" in names and not [n for n in names if "temp" in n]
    with open(tmp_path / "graph.pbtxt") as f:
        graph_def = text_format.Parse(f.read(), tf.compat.v1.GraphDef())
    nodes = {node.name: node for node in graph_def.node}
    assert nodes["dense/kernel"].op == "VarHandleOp" and nodes["global_step"].op == "VarHandleOp"
    # The traced train step is in it, reading the TF1-named variables.
    reads = [n for n in graph_def.node if n.name.startswith("step/") and n.op == "ReadVariableOp"]
    assert any(n.input[0] == "dense/kernel" for n in reads)
    # TensorBoard's graph tab reads the graph from the event file.
    events = [n for n in names if n.startswith("events.out.tfevents")]
    graphs = [e for name in events for e in tf.compat.v1.train.summary_iterator(
        str(tmp_path / name)) if e.graph_def]  # fmt: skip
    assert graphs
    assert est.latest_checkpoint().endswith("-12")


def test_meta_graph_restores_the_checkpoint_in_a_tf1_session(tmp_path, toy_data):
    est = _train(tmp_path, toy_data)
    checkpoint = est.latest_checkpoint()
    graph = tf.Graph()
    with graph.as_default(), tf.compat.v1.Session(graph=graph) as session:
        saver = tf.compat.v1.train.import_meta_graph(checkpoint + ".meta")
        saver.restore(session, checkpoint)
        values = {v.op.name: session.run(v) for v in tf.compat.v1.global_variables()}
    assert set(values) == set(est.get_variable_names())
    for name, value in values.items():
        np.testing.assert_array_equal(value, est.get_variable_value(name))
    assert values["global_step"] == 12


def _hooked_model_fn(features, labels, mode, params):
    """A model_fn whose EstimatorSpec carries a hook, so each train() calls it anew (as
    2.15 did), with a tf.cond, whose branch functions a retrace names anew."""
    spec = classifier_model_fn(features, labels, mode, params)
    if mode != estimator.ModeKeys.TRAIN:
        return spec
    loss = tf.cond(spec.loss > 0.0, lambda: spec.loss, lambda: -spec.loss)
    hook = estimator.LoggingTensorHook({"loss": loss}, every_n_iter=100)
    return spec._replace(training_hooks=[hook])


def _graph_nodes(model_dir):
    with open(model_dir / "graph.pbtxt") as f:
        graph_def = text_format.Parse(f.read(), tf.compat.v1.GraphDef())
    return {node.name: node for node in graph_def.node}


def test_each_train_call_writes_the_graph_of_its_own_trace(tmp_path, toy_data):
    x, y = toy_data
    est = make_estimator(tmp_path, _hooked_model_fn, save_checkpoints_steps=5)

    def input_fn(batch_size):
        def make():
            data = tf.data.Dataset.from_tensor_slices(({"x": x}, y))
            return data.repeat().batch(batch_size, drop_remainder=True)

        return make

    def traced_batch(nodes):
        shape = nodes["step/data"].attr["_output_shapes"].list.shape[0]  # the features
        return shape.dim[0].size

    est.train(input_fn(16), steps=3)
    first = _graph_nodes(tmp_path)
    assert traced_batch(first) == 16
    est.train(input_fn(16), steps=3)  # the model_fn traced again: the same graph
    second = _graph_nodes(tmp_path)
    assert set(second) == set(first) and traced_batch(second) == 16
    est.train(input_fn(8), steps=3)  # another input shape: another graph, not the last one
    third = _graph_nodes(tmp_path)
    assert traced_batch(third) == 8
    checkpoint = est.latest_checkpoint()
    graph = tf.Graph()
    with graph.as_default(), tf.compat.v1.Session(graph=graph) as session:
        tf.compat.v1.train.import_meta_graph(checkpoint + ".meta").restore(session, checkpoint)
        (global_step,) = [v for v in tf.compat.v1.global_variables() if v.op.name == "global_step"]
        assert session.run(global_step) == 9


def test_no_meta_files_without_checkpoint_save_graph_def(tmp_path, toy_data):
    _train(tmp_path, toy_data, checkpoint_save_graph_def=False)
    names = os.listdir(tmp_path)
    assert "graph.pbtxt" in names  # 2.15 wrote it either way
    assert not [n for n in names if n.endswith(".meta")]
    assert "model.ckpt-12.index" in names


def test_a_meta_or_graph_write_cut_short_is_cleaned_up(tmp_path):
    leftover = tmp_path / "model.ckpt-3.meta.tempstate123456"
    leftover.write_bytes(b"partial")
    graph_leftover = tmp_path / "graph.pbtxt.tempstate7402351056878951491"  # kill -9'd
    graph_leftover.write_bytes(b"node {")
    variable = tf.Variable(1.0)
    writer = CheckpointWriter(str(tmp_path), {"v": variable}, 5, None)
    assert not leftover.exists() and not graph_leftover.exists()
    writer.meta_graph = lambda: b"meta"
    path = writer.save(7)
    with open(path + ".meta", "rb") as f:
        assert f.read() == b"meta"


def _restored_global_step(checkpoint):
    graph = tf.Graph()
    with graph.as_default(), tf.compat.v1.Session(graph=graph) as session:
        tf.compat.v1.train.import_meta_graph(checkpoint + ".meta").restore(session, checkpoint)
        (global_step,) = [v for v in tf.compat.v1.global_variables() if v.op.name == "global_step"]
        return session.run(global_step)


def _logged_model_fn(features, labels, mode, params):
    """TensorFlow's own LoggingTensorHook only: the first checkpoint's .meta may be written
    while the first step runs (runtime/train_call.py)."""
    spec = classifier_model_fn(features, labels, mode, params)
    hook = estimator.LoggingTensorHook({"loss": spec.loss}, every_n_iter=100)
    return spec._replace(training_hooks=[hook])


def test_the_first_checkpoint_has_its_meta_when_train_returns(tmp_path, toy_data):
    x, y = toy_data
    est = make_estimator(tmp_path, _logged_model_fn)
    est.train(dataset_input_fn(x, y, 16, repeat=True), steps=1)
    assert _restored_global_step(str(tmp_path / "model.ckpt-0")) == 0
    assert _restored_global_step(str(tmp_path / "model.ckpt-1")) == 1
    assert "graph.pbtxt" in os.listdir(tmp_path)


class _MetaSeenInBeforeRun(tf.compat.v1.train.SessionRunHook):
    """A hook of the user's reading model_dir at each step."""

    def __init__(self, model_dir):
        self.model_dir, self.seen = model_dir, []

    def before_run(self, run_context):
        self.seen.append(os.path.exists(os.path.join(self.model_dir, "model.ckpt-0.meta")))


class _MetaSeenAfterSave(tf.compat.v1.train.CheckpointSaverListener):
    def __init__(self, model_dir):
        self.model_dir, self.seen = model_dir, []

    def after_save(self, session, global_step_value):
        meta = os.path.join(self.model_dir, f"model.ckpt-{global_step_value}.meta")
        self.seen.append((global_step_value, os.path.exists(meta)))


def test_user_code_sees_the_first_checkpoint_with_its_meta(tmp_path, toy_data):
    """As in 2.15, where the first checkpoint was saved with its .meta before any step."""
    x, y = toy_data
    est = make_estimator(tmp_path / "hook", _logged_model_fn)
    hook = _MetaSeenInBeforeRun(str(tmp_path / "hook"))
    est.train(dataset_input_fn(x, y, 16, repeat=True), steps=2, hooks=[hook])
    assert hook.seen == [True, True]
    est = make_estimator(tmp_path / "listener", _logged_model_fn, save_checkpoints_steps=2)
    listener = _MetaSeenAfterSave(str(tmp_path / "listener"))
    est.train(dataset_input_fn(x, y, 16, repeat=True), steps=2, saving_listeners=[listener])
    assert listener.seen == [(0, True), (2, True)]


def _diverging_model_fn(features, labels, mode, params):
    spec = _logged_model_fn(features, labels, mode, params)
    return spec._replace(loss=spec.loss * np.float32("nan"))


def test_a_first_step_that_fails_leaves_the_first_checkpoint_with_its_meta(tmp_path, toy_data):
    x, y = toy_data
    est = make_estimator(tmp_path, _diverging_model_fn)
    with pytest.raises(tf.compat.v1.train.NanLossDuringTrainingError):
        est.train(dataset_input_fn(x, y, 16, repeat=True), steps=3)
    assert est.latest_checkpoint().endswith("model.ckpt-0")
    assert _restored_global_step(est.latest_checkpoint()) == 0
    assert "graph.pbtxt" in os.listdir(tmp_path)  # 2.15 wrote it when its session was made


def test_a_first_checkpoint_whose_meta_cannot_be_written_is_a_failed_save(tmp_path, toy_data):
    """Its .meta cannot be written (a directory has its name): the save fails as a whole,
    and model_dir lists no checkpoint without its .meta."""
    x, y = toy_data
    (tmp_path / "model.ckpt-0.meta").mkdir()
    est = make_estimator(tmp_path, _logged_model_fn, save_checkpoints_steps=200)
    with pytest.raises(CheckpointWriteError, match="checkpoint for step 0"):
        est.train(dataset_input_fn(x, y, 16, repeat=True), steps=400)
    assert est.latest_checkpoint() is None
    assert not [n for n in os.listdir(tmp_path) if n.startswith("model.ckpt-0.")
                and n != "model.ckpt-0.meta"]  # fmt: skip
    assert not [n for n in os.listdir(tmp_path) if n.startswith("model.ckpt-200")]


def test_a_deleted_model_dir_is_named_in_the_save_error(tmp_path):
    model_dir = tmp_path / "runs" / "model"
    model_dir.mkdir(parents=True)
    writer = CheckpointWriter(str(model_dir), {"v": tf.Variable(1.0)}, 5, None)
    writer.save(1)
    shutil.rmtree(tmp_path / "runs")
    with pytest.raises(CheckpointWriteError, match="no longer exists"):
        writer.save(2)


def test_a_step_graph_built_while_a_model_fn_traces_has_its_saver(tmp_path):
    """The graph's thread may build its Saver while the main thread calls a model_fn, whose
    Saver.build is patched away: the .meta still restores."""
    variables = {"v": tf.Variable([1.0, 2.0]), "global_step": tf.Variable(7, dtype=tf.int64)}
    with internals.savers_without_ops():
        graph = StepGraph(traced_step(None, variables))
    meta = tf.compat.v1.MetaGraphDef.FromString(graph.meta_graph())
    assert meta.saver_def.restore_op_name
    writer = CheckpointWriter(str(tmp_path), variables, 5, None)
    writer.meta_graph = graph.meta_graph
    assert _restored_global_step(writer.save(7)) == 7


def test_evaluate_results_in_the_order_tf_estimator_2_15_returned(tmp_path, toy_data):
    x, y = toy_data

    def model_fn(features, labels, mode, params):
        spec = classifier_model_fn(features, labels, mode, params)
        if mode != estimator.ModeKeys.EVAL:
            return spec
        mean = tf.compat.v1.metrics.mean(spec.loss)
        ops = {"zacc": spec.eval_metric_ops["accuracy"], "amean": mean, "mid": mean}
        return estimator.EstimatorSpec(mode, loss=spec.loss, eval_metric_ops=ops)

    est = make_estimator(tmp_path, model_fn)
    est.train(dataset_input_fn(x, y, 16, repeat=True), steps=2)
    # What tf.estimator 2.15.0 returned for these eval_metric_ops (checked with it): the
    # metrics and the loss sorted by name, then global_step.
    assert list(est.evaluate(dataset_input_fn(x, y, 64))) == [
        "amean", "loss", "mid", "zacc", "global_step"
    ]  # fmt: skip
