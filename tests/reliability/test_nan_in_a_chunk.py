"""A non-finite loss at one step inside a compiled run of many steps is seen: training stops
at that step and raises NanLossDuringTrainingError naming it (tf.estimator 2.15's
NanTensorHook checked every step), and no checkpoint holds anything from it on.

The model_fn reports a NaN loss at exactly one step while its train_op minimises the real
loss, so the steps after it are finite again: only a check of every step can see it.
"""

import numpy as np
import pytest
import tensorflow.compat.v1 as tf
from helpers import dataset_input_fn, make_estimator, mirrored_strategy

import keras_estimator as estimator


@pytest.fixture(scope="module")
def data():
    rng = np.random.RandomState(0)
    x = rng.randn(64, 8).astype(np.float32)
    return x, np.argmax(x[:, :3], 1).astype(np.int64)


def nan_at(bad_step, dropout, mean_x=False):
    """A model_fn whose reported loss is NaN at global step `bad_step` only. Dropout makes
    its step keep kernel state, which runs every step in the compiled loop; without it the
    first steps of a call run from Python (engine/loops.py)."""

    def model_fn(features, labels, mode, params):
        step = tf.identity(tf.train.get_global_step())  # read before train_op increments it
        net = tf.layers.dense(features["x"], 16, activation=tf.nn.relu)
        if dropout:
            net = tf.layers.dropout(net, 0.2, training=mode == estimator.ModeKeys.TRAIN)
        logits = tf.layers.dense(net, 3)
        loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
        reported = tf.where(tf.equal(step, bad_step), loss * np.nan, loss)
        if mode == estimator.ModeKeys.EVAL:
            metrics = {"mean_x": tf.metrics.mean(features["x"][:, 0])} if mean_x else None
            return estimator.EstimatorSpec(mode, loss=reported, eval_metric_ops=metrics)
        global_step = tf.train.get_global_step()
        train_op = tf.train.AdamOptimizer(0.01).minimize(loss, global_step=global_step)
        return estimator.EstimatorSpec(mode, loss=reported, train_op=train_op)

    return model_fn


@pytest.mark.parametrize(
    "bad_step, dropout, strategy",
    [
        (20, False, False),  # the first steps of a call, run from Python
        (70, False, False),  # the compiled loop, steps 50 to 99 in one call
        (20, True, False),  # the compiled loop from the first step
        (20, False, True),  # the loop under a MirroredStrategy
    ],
)
def test_a_nan_at_one_step_inside_a_chunk_stops_there_and_saves_nothing_of_it(
    tmp_path, data, bad_step, dropout, strategy
):
    x, y = data
    extra = {"train_distribute": mirrored_strategy()} if strategy else {}
    est = make_estimator(
        tmp_path, nan_at(bad_step, dropout), save_checkpoints_steps=50, **extra
    )  # chunks: step 0, steps 1-49, steps 50-99 (log_step_count_steps=100)
    with pytest.raises(tf.train.NanLossDuringTrainingError) as info:
        est.train(dataset_input_fn(x, y, 16, repeat=True), steps=100)
    message = str(info.value)
    assert f"Model diverged with loss = nan at step {bad_step}" in message
    assert message.endswith(f"Received: loss=nan, step={bad_step}")
    saved = (bad_step // 50) * 50
    assert est.latest_checkpoint().endswith(f"model.ckpt-{saved}")
    assert (
        tf.train.get_checkpoint_state(str(tmp_path))
        .all_model_checkpoint_paths[-1]
        .endswith(f"model.ckpt-{saved}")
    )
    reader = tf.train.load_checkpoint(est.latest_checkpoint())
    for name in reader.get_variable_to_shape_map():
        assert np.all(np.isfinite(reader.get_tensor(name))), name


def test_evaluation_runs_on_through_a_nan_loss(tmp_path, data):
    # tf.estimator stopped training at a NaN, never evaluation: every batch is evaluated.
    x, y = data
    est = make_estimator(tmp_path, nan_at(0, False, mean_x=True), save_checkpoints_steps=50)
    with pytest.raises(tf.train.NanLossDuringTrainingError):
        est.train(dataset_input_fn(x, y, 16, repeat=True), steps=5)  # saved step 0 first
    metrics = est.evaluate(dataset_input_fn(x, y, 8))  # 8 batches, each loss NaN at step 0
    assert np.isnan(metrics["loss"]) and metrics["global_step"] == 0
    assert metrics["mean_x"] == pytest.approx(float(np.mean(x[:, 0])), abs=1e-6)
