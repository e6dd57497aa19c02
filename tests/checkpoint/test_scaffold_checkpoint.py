"""A Scaffold whose saver is a `tf.train.Checkpoint` (TensorFlow's checkpoint migration
guide): training writes object-based checkpoints with the Checkpoint's keys and restores
from them in later calls; 2.15.1 gave the same keys and values (4, then 8 at step 3)."""

import tensorflow as tf

import keras_estimator as estimator
from keras_estimator.checkpoint.checkpoint_files import CheckpointWriter

v1 = tf.compat.v1


def _train_fn():
    return tf.data.Dataset.from_tensor_slices(([1, 2, 3], [4, 5, 6]))


def _model_fn(features, labels, mode):
    step = v1.train.get_or_create_global_step()
    var = v1.get_variable("var", shape=[], dtype=tf.float32, initializer=v1.constant_initializer(0))
    checkpoint = tf.train.Checkpoint(var_list={"var": var}, step=step)
    return estimator.EstimatorSpec(
        mode, predictions={"v": var + 0 * tf.cast(features, tf.float32)}, loss=tf.constant(1.0),
        train_op=tf.group(var.assign_add(2), step.assign_add(1)),
        scaffold=v1.train.Scaffold(saver=checkpoint),
    )  # fmt: skip


def test_object_based_checkpoints_are_written_and_restored(tmp_path):
    est = estimator.Estimator(_model_fn, model_dir=str(tmp_path))
    est.train(_train_fn, steps=1)
    assert sorted(est.get_variable_names()) == [
        "_CHECKPOINTABLE_OBJECT_GRAPH",
        "step/.ATTRIBUTES/VARIABLE_VALUE",
        "var_list/var/.ATTRIBUTES/VARIABLE_VALUE",
    ]
    assert est.get_variable_value("var_list/var/.ATTRIBUTES/VARIABLE_VALUE") == 2
    est.train(_train_fn, steps=2)  # restored from the object-based checkpoint
    assert est.latest_checkpoint().endswith("model.ckpt-3")
    assert est.get_variable_value("var_list/var/.ATTRIBUTES/VARIABLE_VALUE") == 6
    restored = tf.Variable(0, dtype=tf.int64)
    tf.train.Checkpoint(step=restored).read(est.latest_checkpoint()).expect_partial()
    assert int(restored.numpy()) == 3
    assert [p["v"] for p in est.predict(lambda: _train_fn().batch(3))] == [6.0, 6.0, 6.0]


def test_the_writer_writes_a_checkpoint_objects_bundle(tmp_path):
    var = tf.Variable(5.0)
    writer = CheckpointWriter(
        str(tmp_path), {}, 5, None, object_checkpoint=tf.train.Checkpoint(v=var)
    )
    path = writer.save(7)
    assert tf.train.load_checkpoint(path).get_tensor("v/.ATTRIBUTES/VARIABLE_VALUE") == 5.0
    assert tf.train.latest_checkpoint(str(tmp_path)) == path
