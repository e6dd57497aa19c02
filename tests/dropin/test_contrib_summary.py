"""tf.contrib.summary after install(): a TPUEstimator host_call written the TF1 TPU way
writes its events; the other summary names onto tf.summary."""

import glob

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as estimator
from keras_estimator.dropin.contrib import summary

v1 = tf.compat.v1


def _events(directory):
    values = {}
    for path in glob.glob(f"{directory}/events.out.tfevents.*"):
        for event in v1.train.summary_iterator(path):
            for value in event.summary.value:
                values.setdefault(value.tag, []).append(
                    (event.step, float(tf.make_ndarray(value.tensor)))
                )
    return values


def _model_fn(features, labels, mode, params):
    tf1 = v1
    contrib = tf1.contrib
    logits = tf1.layers.dense(features["x"], 2)
    loss = tf1.losses.sparse_softmax_cross_entropy(labels, logits)
    step = tf1.train.get_global_step()
    train_op = tf1.train.GradientDescentOptimizer(0.1).minimize(loss, step)
    host_dir = params["host_dir"]

    def host_call_fn(gs, loss):
        with contrib.summary.create_file_writer(host_dir, max_queue=100).as_default():
            with contrib.summary.always_record_summaries():
                contrib.summary.scalar("loss", loss[0], step=gs[0])
                contrib.summary.scalar("twice", 2 * loss[0], family="train", step=gs[0])
                return contrib.summary.all_summary_ops()

    host_call = (host_call_fn, [tf.reshape(step, [1]), tf.reshape(loss, [1])])
    return contrib.tpu.TPUEstimatorSpec(mode, loss=loss, train_op=train_op, host_call=host_call)


def test_a_tpu_host_call_with_contrib_summary_writes_events(tmp_path):
    x = np.random.default_rng(0).normal(size=(32, 3)).astype("float32")
    y = (x[:, 0] > 0).astype("int32")
    estimator.install()
    try:
        contrib = v1.contrib
        tpu_config = contrib.tpu.TPUConfig(iterations_per_loop=2)
        config = contrib.tpu.RunConfig(model_dir=str(tmp_path / "model"), tpu_config=tpu_config)
        est = contrib.tpu.TPUEstimator(_model_fn, config=config, use_tpu=False,
                                       train_batch_size=8,
                                       params={"host_dir": str(tmp_path / "host")})  # fmt: skip

        def input_fn(params):
            dataset = tf.data.Dataset.from_tensor_slices(({"x": x}, y))
            return dataset.repeat().batch(params["batch_size"], drop_remainder=True)

        est.train(input_fn, max_steps=6)
    finally:
        estimator.uninstall()
    events = _events(tmp_path / "host")
    steps = [step for step, _ in events["loss"]]
    assert len(steps) == 6 and steps == list(range(steps[0], steps[0] + 6))  # one per step
    np.testing.assert_allclose([v for _, v in events["train/twice"]],
                               [2 * v for _, v in events["loss"]], rtol=1e-6)  # fmt: skip


def test_summary_names_default_to_the_global_step(tmp_path):
    writer = summary.create_summary_file_writer(str(tmp_path))
    assert summary.create_summary_file_writer is summary.create_file_writer

    @tf.function
    def write(step, value, image):
        with writer.as_default():
            with summary.record_summaries_every_n_global_steps(2, global_step=step):
                summary.scalar("every_2", value, step=step)
            with summary.never_record_summaries():
                summary.scalar("never", value, step=step)
            with summary.always_record_summaries():
                summary.histogram("hist", [value, value], step=step)
                summary.image("img", image, max_images=1, step=step)
                summary.audio("audio", tf.zeros([1, 4, 1]), 8000, 1, step=step)

    image = tf.zeros([1, 2, 2, 3])
    for step in range(4):
        write(tf.constant(step, tf.int64), float(step), image)
    summary.flush(writer)
    summary.initialize()  # a no-op in TF2
    tags = {}
    for path in glob.glob(f"{tmp_path}/events.out.tfevents.*"):
        for event in v1.train.summary_iterator(path):
            for value in event.summary.value:
                tags.setdefault(value.tag, []).append(event.step)
    assert tags["every_2"] == [0, 2] and "never" not in tags
    assert tags["hist"] == [0, 1, 2, 3] and tags["img"] == [0, 1, 2, 3] and "audio" in tags
    with tf.Graph().as_default(), pytest.raises(ValueError, match="no global step"):
        summary.scalar("loss", 1.0)
