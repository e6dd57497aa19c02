"""TF2 `tf.summary.scalar` / `histogram` / `image` in a model_fn land in model_dir's event
files every `save_summary_steps`, where TensorBoard (a dependency) reads them."""

import os
import sysconfig

import keras
import numpy as np
import pytest
import tensorflow as tf
from helpers import run_process
from tensorboard.backend.event_processing import plugin_event_accumulator

import keras_estimator as estimator


def tf2_summary_model_fn(features, labels, mode, params):
    logits = params["dense"](features["x"])
    if mode == estimator.ModeKeys.PREDICT:
        return estimator.EstimatorSpec(mode, predictions={"logits": logits})
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits))
    tf.summary.scalar("tf2_scalar", loss * 3.0)
    tf.summary.histogram("tf2_histogram", logits)
    pixels = tf.reshape(tf.sigmoid(features["x"][:2]), [2, 2, 4, 1])
    tf.summary.image("tf2_image", pixels, max_outputs=2)
    return estimator.EstimatorSpec(mode, loss=loss, train_op=keras.optimizers.SGD(0.1))


def events_by_tag(directory):
    """{tag: [(step, Summary.Value), ...]} from every event file in `directory`."""
    found = {}
    for path in tf.io.gfile.glob(os.path.join(directory, "events.*")):
        for event in tf.compat.v1.train.summary_iterator(path):
            for value in event.summary.value:
                found.setdefault(value.tag, []).append((event.step, value))
    return found


@pytest.fixture(scope="module")
def trained_model_dir(tmp_path_factory):
    model_dir = str(tmp_path_factory.mktemp("tf2_summaries"))
    x = np.random.RandomState(0).randn(64, 8).astype(np.float32)
    y = (x[:, 0] > 0).astype(np.int64)

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).repeat().batch(16)

    config = estimator.RunConfig(model_dir=model_dir, save_summary_steps=5)
    params = {"dense": keras.layers.Dense(2)}  # a Keras layer, reused on every trace
    est = estimator.Estimator(tf2_summary_model_fn, config=config, params=params)
    est.train(input_fn, steps=12)
    return model_dir


def test_tf2_summaries_of_a_model_fn_are_written_every_save_summary_steps(trained_model_dir):
    events = events_by_tag(trained_model_dir)
    for tag, plugin in [
        ("tf2_scalar", "scalars"),
        ("tf2_histogram", "histograms"),
        ("tf2_image", "images"),
    ]:
        # stamped with the global step after the step, as tf.estimator's loss: 1, 6, 11
        assert [step for step, _ in events[tag]] == [1, 6, 11], tag
        assert {value.metadata.plugin_data.plugin_name for _, value in events[tag]} == {plugin}
    assert [step for step, _ in events["loss"]] == [1, 6, 11]
    for (_, loss), (_, tripled) in zip(events["loss"], events["tf2_scalar"]):
        assert float(tf.make_ndarray(tripled.tensor)) == pytest.approx(3 * loss.simple_value)
    # An image summary is [width, height, png, png]: both images of the batch.
    _, image = events["tf2_image"][-1]
    width, height, *pngs = tf.make_ndarray(image.tensor)
    assert (int(width), int(height), len(pngs)) == (4, 2, 2)
    assert all(png.startswith(b"\x89PNG") for png in pngs)


def test_tensorboard_reads_the_model_dir(trained_model_dir):
    # TensorBoard's own reader, as its dashboards sort the tags.
    accumulator = plugin_event_accumulator.EventAccumulator(trained_model_dir)
    accumulator.Reload()
    assert {"tf2_scalar", "loss"} <= set(accumulator.PluginTagToContent("scalars"))
    assert set(accumulator.PluginTagToContent("histograms")) == {"tf2_histogram"}
    assert set(accumulator.PluginTagToContent("images")) == {"tf2_image"}
    # The `tensorboard` command installed beside this interpreter (not PATH: an unactivated
    # venv has none there) runs and finds the tags.
    command = os.path.join(sysconfig.get_path("scripts"), "tensorboard")
    inspected = run_process([command, "--inspect", "--logdir", trained_model_dir])
    assert inspected.returncode == 0, inspected.stderr[-2000:]
    for tag in ("loss", "tf2_scalar", "tf2_histogram", "tf2_image"):
        assert f"   {tag}\n" in inspected.stdout, inspected.stdout[-2000:]
