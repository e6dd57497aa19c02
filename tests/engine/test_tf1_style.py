"""TF1-style model_fns: variable scopes, v1 optimizers, global step, UPDATE_OPS, v1 metrics."""

import collections

import numpy as np
import pytest
import tensorflow.compat.v1 as tf
from helpers import dataset_input_fn, make_estimator

import keras_estimator as estimator


def _ones_input_fn(n=64, batch=8, dim=2):
    x = np.ones((n, dim), np.float32)
    y = np.zeros((n,), np.float32)
    return dataset_input_fn(x, y, batch, repeat=True)


def test_variable_scope_reuse_auto_reuse_and_initializers(tmp_path):
    def model_fn(features, labels, mode):
        def tower(x):
            with tf.variable_scope("shared", reuse=tf.AUTO_REUSE):
                w = tf.get_variable("w", [2, 1], initializer=tf.constant_initializer(0.5))
            return tf.matmul(x, w)

        with tf.variable_scope("block"):
            b = tf.get_variable("b", [1], initializer=tf.ones_initializer())
        with tf.variable_scope("block", reuse=True):
            same_b = tf.get_variable("b")
        out = tower(features["x"]) + tower(features["x"] * 2.0) + b + same_b
        loss = tf.reduce_mean(tf.square(out))
        train_op = tf.train.GradientDescentOptimizer(0.0).minimize(
            loss, global_step=tf.train.get_global_step()
        )
        return estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

    est = estimator.Estimator(model_fn, model_dir=str(tmp_path))
    est.train(_ones_input_fn(), steps=2)
    names = set(est.get_variable_names())
    assert names == {"global_step", "shared/w", "block/b"}
    np.testing.assert_allclose(est.get_variable_value("shared/w"), [[0.5], [0.5]])
    np.testing.assert_allclose(est.get_variable_value("block/b"), [1.0])


def test_regularizers_feed_get_regularization_loss(tmp_path):
    seen = {}

    def model_fn(features, labels, mode):
        w = tf.get_variable(
            "w",
            [2, 1],
            initializer=tf.constant_initializer(3.0),
            regularizer=lambda v: 0.5 * tf.reduce_sum(tf.square(v)),
        )
        tf.layers.dense(features["x"], 1, kernel_regularizer=lambda k: tf.reduce_sum(k) * 0.0)
        reg = tf.losses.get_regularization_loss()
        seen["reg"] = reg
        loss = tf.reduce_mean(tf.matmul(features["x"], w)) * 0.0 + reg
        train_op = tf.train.GradientDescentOptimizer(0.1).minimize(
            loss, global_step=tf.train.get_global_step()
        )
        return estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

    est = estimator.Estimator(model_fn, model_dir=str(tmp_path))
    result = est.evaluate(_ones_input_fn(), steps=1)
    assert result["loss"] == pytest.approx(0.5 * 2 * 9.0)  # the regulariser really counts
    est.train(_ones_input_fn(), steps=1)
    # d/dw of 0.5*sum(w^2) = w -> w = 3 - 0.1 * 3
    np.testing.assert_allclose(est.get_variable_value("w"), [[2.7], [2.7]], rtol=1e-6)


def test_minimize_with_var_list_trains_only_those(tmp_path):
    def model_fn(features, labels, mode):
        a = tf.get_variable("a", [], initializer=tf.constant_initializer(1.0))
        b = tf.get_variable("b", [], initializer=tf.constant_initializer(1.0))
        loss = a * b * tf.reduce_mean(features["x"])
        train_op = tf.train.GradientDescentOptimizer(0.5).minimize(
            loss, global_step=tf.train.get_global_step(), var_list=[a]
        )
        return estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

    est = estimator.Estimator(model_fn, model_dir=str(tmp_path))
    est.train(_ones_input_fn(), steps=2)
    assert est.get_variable_value("a") == pytest.approx(0.0)  # 1 - 0.5 - 0.5
    assert est.get_variable_value("b") == pytest.approx(1.0)
    assert est.get_variable_value("global_step") == 2


@pytest.mark.parametrize("style", ["minimize_with_global_step", "no_global_step", "group", "cond"])
def test_global_step_is_incremented_exactly_once_per_step(tmp_path, style):
    def model_fn(features, labels, mode):
        w = tf.get_variable("w", [], initializer=tf.constant_initializer(1.0))
        loss = w * tf.reduce_mean(features["x"])
        opt = tf.train.GradientDescentOptimizer(0.1)
        gs = tf.train.get_global_step()
        if style == "minimize_with_global_step":
            train_op = opt.minimize(loss, global_step=gs)
        elif style == "no_global_step":
            train_op = opt.minimize(loss)
        elif style == "group":
            train_op = tf.group(opt.minimize(loss), tf.assign_add(gs, 1))
        else:  # BERT-style: the increment happens inside a cond the engine cannot see into
            update = opt.minimize(loss)
            with tf.control_dependencies([update]):
                train_op = tf.cond(
                    tf.reduce_mean(features["x"]) > 0,
                    lambda: tf.assign_add(gs, 1),
                    lambda: tf.identity(gs),
                )
        return estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

    est = estimator.Estimator(model_fn, model_dir=str(tmp_path))
    est.train(_ones_input_fn(), steps=5)
    assert est.get_variable_value("global_step") == 5
    assert est.get_variable_value("w") == pytest.approx(1.0 - 5 * 0.1)


def test_update_ops_make_batch_norm_moving_averages_update(tmp_path):
    def model_fn(features, labels, mode):
        training = mode == estimator.ModeKeys.TRAIN
        net = tf.layers.batch_normalization(features["x"], training=training, momentum=0.5)
        loss = tf.reduce_mean(tf.square(net - 1.0))
        update_ops = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
        if training:
            assert len(update_ops) == 2
        with tf.control_dependencies(update_ops):
            train_op = tf.train.GradientDescentOptimizer(0.0).minimize(
                loss, global_step=tf.train.get_global_step()
            )
        return estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

    x = np.full((64, 2), 4.0, np.float32)
    x[:, 1] = np.tile([2.0, 6.0], 32)  # mean 4, variance 4
    est = estimator.Estimator(model_fn, model_dir=str(tmp_path))
    est.train(dataset_input_fn(x, np.zeros(64, np.float32), 8, repeat=True), steps=3)
    mean = est.get_variable_value("batch_normalization/moving_mean")
    var = est.get_variable_value("batch_normalization/moving_variance")
    # momentum 0.5, three updates from 0 towards 4: 4 * (1 - 0.5**3)
    np.testing.assert_allclose(mean, [3.5, 3.5], rtol=1e-5)
    np.testing.assert_allclose(var, [0.125, 0.125 + 4 * 0.875], rtol=1e-5)
    assert "batch_normalization/gamma" in est.get_variable_names()


def test_learning_rate_decay_on_global_step_and_clip_by_global_norm(tmp_path):
    def model_fn(features, labels, mode):
        w = tf.get_variable("w", [2], initializer=tf.zeros_initializer())
        # Gradient of this loss w.r.t. w is [30, 40]: norm 50, clipped to norm 5.
        loss = tf.reduce_sum(w * tf.constant([30.0, 40.0])) * tf.reduce_mean(features["x"])
        gs = tf.train.get_global_step()
        lr = tf.train.exponential_decay(1.0, gs, decay_steps=1, decay_rate=0.5, staircase=True)
        opt = tf.train.GradientDescentOptimizer(lr)
        grads, variables = zip(*opt.compute_gradients(loss))
        grads, _ = tf.clip_by_global_norm(grads, 5.0)
        train_op = opt.apply_gradients(zip(grads, variables), global_step=gs)
        return estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

    est = estimator.Estimator(model_fn, model_dir=str(tmp_path))
    est.train(_ones_input_fn(), steps=3)
    # clipped gradient [3, 4]; learning rates 1, 0.5, 0.25 -> total 1.75
    np.testing.assert_allclose(est.get_variable_value("w"), [-5.25, -7.0], rtol=1e-6)


def test_polynomial_decay_schedule(tmp_path):
    def model_fn(features, labels, mode):
        w = tf.get_variable("w", [], initializer=tf.zeros_initializer())
        loss = w * tf.reduce_mean(features["x"])
        gs = tf.train.get_global_step()
        lr = tf.train.polynomial_decay(1.0, gs, decay_steps=4, end_learning_rate=0.0, power=1.0)
        train_op = tf.train.GradientDescentOptimizer(lr).minimize(loss, global_step=gs)
        return estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

    est = estimator.Estimator(model_fn, model_dir=str(tmp_path))
    est.train(_ones_input_fn(), steps=4)
    assert est.get_variable_value("w") == pytest.approx(-(1.0 + 0.75 + 0.5 + 0.25))


def test_v1_metrics_and_losses(tmp_path):
    labels_np = np.array([1, 0, 1, 1, 0, 0, 1, 0], np.int64)
    scores_np = np.array([0.9, 0.1, 0.4, 0.8, 0.6, 0.2, 0.7, 0.3], np.float32)

    def model_fn(features, labels, mode):
        tf.get_variable("unused", [], initializer=tf.zeros_initializer())
        scores = features["x"][:, 0]
        predicted = tf.cast(scores > 0.5, tf.int64)
        loss = tf.losses.mean_squared_error(tf.cast(labels, tf.float32), scores)
        metrics = {
            "accuracy": tf.metrics.accuracy(labels, predicted),
            "precision": tf.metrics.precision(labels, predicted),
            "recall": tf.metrics.recall(labels, predicted),
            "auc": tf.metrics.auc(labels, scores, num_thresholds=1000),
            "mean_score": tf.metrics.mean(scores),
            "rmse": tf.metrics.root_mean_squared_error(tf.cast(labels, tf.float32), scores),
        }
        return estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops=metrics)

    est = estimator.Estimator(model_fn, model_dir=str(tmp_path))
    x = scores_np[:, None]
    result = est.evaluate(dataset_input_fn(x, labels_np, batch_size=3))
    predicted = (scores_np > 0.5).astype(np.int64)
    tp = np.sum((predicted == 1) & (labels_np == 1))
    assert result["accuracy"] == pytest.approx(np.mean(predicted == labels_np))
    assert result["precision"] == pytest.approx(tp / predicted.sum())
    assert result["recall"] == pytest.approx(tp / labels_np.sum())
    assert result["auc"] == pytest.approx(15 / 16, abs=0.01)
    assert result["mean_score"] == pytest.approx(scores_np.mean())
    assert result["rmse"] == pytest.approx(np.sqrt(np.mean((labels_np - scores_np) ** 2)))


def test_train_op_built_in_eval_and_predict_mode_does_not_run(tmp_path):
    """Like session.run(fetches): only what the results need runs outside TRAIN."""

    def model_fn(features, labels, mode):
        w = tf.get_variable("w", [], initializer=tf.constant_initializer(1.0))
        pred = w * features["x"][:, 0]
        loss = tf.reduce_mean(pred)
        train_op = tf.train.GradientDescentOptimizer(1.0).minimize(
            loss, global_step=tf.train.get_global_step()
        )
        return estimator.EstimatorSpec(
            mode,
            predictions=pred,
            loss=loss,
            train_op=train_op,
            eval_metric_ops={"mean": tf.metrics.mean(pred)},
        )

    est = estimator.Estimator(model_fn, model_dir=str(tmp_path))
    est.train(_ones_input_fn(), steps=1)  # w: 1 -> 0
    for _ in range(2):
        assert est.evaluate(_ones_input_fn(), steps=3)["mean"] == pytest.approx(0.0)
        x_two = np.ones((2, 2), np.float32)
        assert list(est.predict(dataset_input_fn(x_two, batch_size=2))) == [0.0, 0.0]
    assert est.get_variable_value("w") == pytest.approx(0.0)
    assert est.get_variable_value("global_step") == 1


def test_metric_variables_are_not_checkpointed(tmp_path, toy_data):

    x, y = toy_data
    est = make_estimator(tmp_path)
    est.train(dataset_input_fn(x, y, repeat=True), steps=2)
    est.evaluate(dataset_input_fn(x, y))
    est.train(dataset_input_fn(x, y, repeat=True), steps=1)
    names = est.get_variable_names()
    assert not [n for n in names if "accuracy" in n or "eval_loss" in n or n.endswith("count")]
    assert {"beta1_power", "beta2_power", "dense/kernel/Adam", "dense/kernel/Adam_1"} <= set(names)


def test_tensors_in_a_model_fn_compare_and_hash_by_identity_as_in_a_tf1_graph(tmp_path):
    # 2.15 built the model_fn in a TF1 graph, where `==` between tensors was identity and
    # tensors were hashable: `x in list_of_namedtuples_holding_tensors` (AdaNet's pruning)
    # and dicts keyed by tensors worked.
    Part = collections.namedtuple("Part", ["logits"])
    seen = {}

    def model_fn(features, labels, mode):
        w = tf.compat.v1.get_variable("w", [2, 1])
        first = Part(tf.matmul(features["x"], w))
        second = Part(tf.matmul(features["x"], w) * 2.0)
        seen["in"] = second in [first, second] and first not in [second]
        seen["keyed"] = {first.logits: "first", second.logits: "second"}[second.logits]
        seen["equal"] = tf.equal(first.logits, first.logits).dtype == tf.bool
        loss = tf.reduce_mean(tf.square(first.logits[:, 0] - labels))
        train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
            loss, tf.compat.v1.train.get_global_step()
        )
        return estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

    x = np.ones((4, 2), "float32")
    est = estimator.Estimator(model_fn, model_dir=str(tmp_path))
    est.train(lambda: tf.data.Dataset.from_tensor_slices(({"x": x}, x[:, 0])).batch(2), steps=1)
    assert seen == {"in": True, "keyed": "second", "equal": True}
