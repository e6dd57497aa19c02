"""tf.contrib.layers after install(): initializers, regularizers, layers and optimize_loss
against tf-slim (the maintained copy of contrib.layers) and TF1 formulas, in real graphs and
in an Estimator."""

import numpy as np
import pytest
import tensorflow as tf
import tf_slim
from helpers import make_estimator

import keras_estimator as estimator
from keras_estimator.dropin.contrib import layers, metrics

v1 = tf.compat.v1
RNG = np.random.default_rng(0)


def _relative_names(prefix):
    return sorted(v.op.name[len(prefix) + 1 :] for v in v1.global_variables(prefix))


def _run_both(build, inputs):
    """Builds `build(lib, x)` with our layers and tf-slim's in one graph, gives tf-slim's
    variables our values, and returns (our output, tf-slim's, our names, tf-slim's)."""
    graph = tf.Graph()
    with graph.as_default():
        v1.set_random_seed(1)
        x = tf.constant(inputs)
        with v1.variable_scope("ours"):
            ours = build(layers, x)
        with v1.variable_scope("slim"):
            theirs = build(tf_slim, x)
        names = _relative_names("ours"), _relative_names("slim")
        with v1.Session(graph=graph) as session:
            session.run(v1.global_variables_initializer())
            for name in names[0]:
                value = session.run(v1.global_variables(f"ours/{name}")[0])
                session.run(v1.global_variables(f"slim/{name}")[0].assign(value))
            return (*session.run([ours, theirs]), *names)


@pytest.mark.parametrize(
    "build",
    [
        lambda lib, x: lib.fully_connected(lib.flatten(x), 7),
        lambda lib, x: lib.fully_connected(x, 3, activation_fn=None, scope="logits"),
        lambda lib, x: lib.conv2d(x, 5, [3, 3], stride=2, padding="VALID"),
        lambda lib, x: lib.conv2d(x, 4, 3, rate=2, activation_fn=tf.nn.tanh, scope="c1"),
        lambda lib, x: lib.max_pool2d(lib.conv2d(x, 2, 1, biases_initializer=None), [2, 2]),
        lambda lib, x: lib.avg_pool2d(x, 3, stride=1, padding="SAME"),
        lambda lib, x: lib.layer_norm(x, begin_norm_axis=1, begin_params_axis=-1),
    ],
    ids=["fully_connected+flatten", "rank4_fc", "conv2d", "dilated", "max_pool2d", "avg_pool2d",
         "layer_norm"],
)  # fmt: skip
def test_layers_match_tf_slim_in_names_and_values(build):
    ours, theirs, our_names, their_names = _run_both(
        build, RNG.normal(size=(4, 6, 6, 3)).astype("float32")
    )
    assert our_names == their_names
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    ("shape", "build"),
    [
        ((3, 9, 2), lambda lib, x: lib.conv1d(x, 4, 3, stride=2)),
        ((2, 5, 5, 5, 2), lambda lib, x: lib.conv3d(x, 3, [2, 3, 3], padding="VALID")),
        ((2, 6, 6, 2), lambda lib, x: lib.convolution(x, 3, [1, 2], rate=[1, 2])),
    ],
    ids=["conv1d", "conv3d", "convolution"],
)
def test_convolutions_of_every_rank_match_tf_slim(shape, build):
    ours, theirs, our_names, their_names = _run_both(
        build, RNG.normal(size=shape).astype("float32")
    )
    assert our_names == their_names == ["Conv/biases", "Conv/weights"]
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-5)
    assert layers.convolution1d is layers.conv1d and layers.convolution2d is layers.conv2d
    assert layers.convolution3d is layers.conv3d


def test_variable_names_collections_and_regularization_losses():
    with tf.Graph().as_default():
        x = v1.placeholder(tf.float32, [None, 8, 8, 3])
        net = layers.conv2d(x, 4, [3, 3], weights_regularizer=layers.l2_regularizer(0.5),
                            variables_collections={"weights": ["my_weights"]})  # fmt: skip
        net = layers.conv2d(net, 4, [3, 3])  # a second call: Conv_1
        net = layers.fully_connected(layers.flatten(net), 10, scope="hidden")
        layers.fully_connected(net, 2, normalizer_fn=layers.batch_norm,
                               normalizer_params={"scale": True})  # fmt: skip
        layers.embed_sequence(v1.placeholder(tf.int32, [None, 5]), vocab_size=20, embed_dim=3)
        assert [v.op.name for v in v1.global_variables()] == [
            "Conv/weights", "Conv/biases", "Conv_1/weights", "Conv_1/biases",
            "hidden/weights", "hidden/biases", "fully_connected/weights",
            "fully_connected/BatchNorm/beta", "fully_connected/BatchNorm/gamma",
            "fully_connected/BatchNorm/moving_mean", "fully_connected/BatchNorm/moving_variance",
            "EmbedSequence/embeddings",
        ]  # fmt: skip
        assert v1.global_variables("Conv/weights")[0].shape == (3, 3, 3, 4)
        model = {v.op.name for v in v1.get_collection(v1.GraphKeys.MODEL_VARIABLES)}
        assert "hidden/weights" in model and "fully_connected/BatchNorm/moving_mean" in model
        trainable = {v.op.name for v in v1.trainable_variables()}
        assert "fully_connected/BatchNorm/moving_mean" not in trainable
        assert [v.op.name for v in v1.get_collection("my_weights")] == ["Conv/weights"]
        assert len(v1.get_collection(v1.GraphKeys.REGULARIZATION_LOSSES)) == 1
        assert len(v1.get_collection(v1.GraphKeys.UPDATE_OPS)) == 2  # moving mean, variance


@pytest.mark.parametrize("uniform", [True, False])
@pytest.mark.parametrize("mode", ["FAN_IN", "FAN_OUT", "FAN_AVG"])
def test_initializers_draw_what_contrib_drew(mode, uniform):
    with tf.Graph().as_default():
        v1.set_random_seed(3)
        shape = [3, 3, 40, 60]
        ours = layers.variance_scaling_initializer(1.7, mode, uniform, seed=5)(shape)
        theirs = tf_slim.variance_scaling_initializer(1.7, mode, uniform, seed=5)(shape)
        xavier = layers.xavier_initializer(uniform=uniform, seed=5)(shape)
        xavier_slim = tf_slim.xavier_initializer(uniform=uniform, seed=5)(shape)
        with v1.Session() as session:
            ours, theirs, xavier, xavier_slim = session.run([ours, theirs, xavier, xavier_slim])
    np.testing.assert_array_equal(ours, theirs)
    np.testing.assert_array_equal(xavier, xavier_slim)
    fan_in, fan_out = 9 * 40, 9 * 60
    n = {"FAN_IN": fan_in, "FAN_OUT": fan_out, "FAN_AVG": (fan_in + fan_out) / 2}[mode]
    if uniform:  # uniform in +-sqrt(3 factor / n)
        assert np.abs(ours).max() <= np.sqrt(3 * 1.7 / n) + 1e-6
        assert np.abs(ours).max() > 0.95 * np.sqrt(3 * 1.7 / n)
    else:  # a normal of stddev sqrt(1.3 factor / n), truncated at two stddevs
        assert np.abs(ours).max() <= 2 * np.sqrt(1.3 * 1.7 / n) + 1e-6
    assert layers.xavier_initializer_conv2d is layers.xavier_initializer


def test_regularizers_compute_tf1_penalties_and_check_scales():
    weights = np.array([[1.0, -2.0], [0.5, 3.0]], "float32")
    with tf.Graph().as_default():
        w = tf.constant(weights)
        values = [
            layers.l1_regularizer(0.1)(w),
            layers.l2_regularizer(0.1)(w),
            layers.l1_l2_regularizer(0.1, 0.2)(w),
            layers.sum_regularizer([layers.l1_regularizer(0.3), None])(w),
            tf_slim.l1_l2_regularizer(0.1, 0.2)(w),
        ]
        second = tf.constant([1.0, 1.0])
        total = layers.apply_regularization(layers.l2_regularizer(1.0), [w, second])
        assert total in v1.get_collection(v1.GraphKeys.REGULARIZATION_LOSSES)
        with pytest.raises(ValueError, match="No weights to regularize"):
            layers.apply_regularization(layers.l1_regularizer(1.0))
        with v1.Session() as session:
            l1, l2, l1_l2, summed, slim_l1_l2, total = session.run([*values, total])
    np.testing.assert_allclose(l1, 0.1 * 6.5, rtol=1e-6)
    np.testing.assert_allclose(l2, 0.1 * 14.25 / 2, rtol=1e-6)  # tf.nn.l2_loss halves
    np.testing.assert_allclose(l1_l2, 0.1 * 6.5 + 0.2 * 14.25 / 2, rtol=1e-6)
    np.testing.assert_allclose(l1_l2, slim_l1_l2, rtol=1e-6)
    np.testing.assert_allclose(summed, 0.3 * 6.5, rtol=1e-6)
    np.testing.assert_allclose(total, 14.25 / 2 + 1.0, rtol=1e-6)
    assert layers.l2_regularizer(0.0)(tf.constant(weights)) is None
    with pytest.raises(ValueError, match="integer"):
        layers.l1_regularizer(1)
    with pytest.raises(ValueError, match=">= 0"):
        layers.l2_regularizer(-0.1)


def test_batch_norm_rank4_training_inference_and_moving_averages():
    x = RNG.normal(2.0, 3.0, size=(8, 4, 4, 3)).astype("float32")
    with tf.Graph().as_default():
        inputs = tf.constant(x)
        train = layers.batch_norm(inputs, decay=0.9, scale=True, updates_collections=None)
        infer = layers.batch_norm(inputs, is_training=False, reuse=True, scope="BatchNorm")
        placeholder = v1.placeholder(tf.bool, [])
        switch = layers.batch_norm(inputs, is_training=placeholder, scope="BatchNorm", reuse=True,
                                   updates_collections=None)  # fmt: skip
        mean_var, var_var = v1.global_variables("BatchNorm/moving_")
        with v1.Session() as session:
            session.run(v1.global_variables_initializer())
            trained = session.run(train)
            moving_mean, moving_var = session.run([mean_var, var_var])
            inferred = session.run(infer)
            unchanged = session.run(switch, {placeholder: False})
            assert np.allclose(session.run(mean_var), moving_mean)  # no update when False
    mean, var = x.mean((0, 1, 2)), x.var((0, 1, 2))
    np.testing.assert_allclose(trained, (x - mean) / np.sqrt(var + 1e-3), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(moving_mean, 0.1 * mean, rtol=1e-5)
    n = 8 * 4 * 4  # the fused kernel (rank 4): towards the unbiased variance, as in TF1
    np.testing.assert_allclose(moving_var, 0.9 + 0.1 * var * n / (n - 1), rtol=1e-5)
    expected = (x - moving_mean) / np.sqrt(moving_var + 1e-3)
    np.testing.assert_allclose(inferred, expected, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(unchanged, expected, rtol=1e-4, atol=1e-4)
    with tf.Graph().as_default(), pytest.raises(NotImplementedError, match="renorm"):
        layers.batch_norm(tf.constant(x), renorm=True)


@pytest.mark.parametrize("fused", [None, False])
def test_batch_norm_rank2_moves_towards_the_fused_kernels_variance(fused):
    x = RNG.normal(-1.0, 2.0, size=(10, 3)).astype("float32")
    with tf.Graph().as_default():
        outputs = layers.batch_norm(tf.constant(x), center=False, fused=fused)
        with tf.control_dependencies(v1.get_collection(v1.GraphKeys.UPDATE_OPS)):
            outputs = tf.identity(outputs)
        with v1.Session() as session:
            session.run(v1.global_variables_initializer())
            normalized = session.run(outputs)
            moving_var = session.run(v1.global_variables("BatchNorm/moving_variance")[0])
    np.testing.assert_allclose(normalized, (x - x.mean(0)) / np.sqrt(x.var(0) + 1e-3),
                               rtol=1e-4, atol=1e-4)  # fmt: skip
    batch_var = x.var(0) * (10 / 9 if fused is None else 1.0)  # fused=False: the biased one
    np.testing.assert_allclose(moving_var, 0.999 + 0.001 * batch_var, rtol=1e-6)


def test_dropout_embed_sequence_and_linear():
    x = np.ones((200, 10), "float32")
    ids = np.array([[1, 2, 2], [0, 1, 3]])
    with tf.Graph().as_default():
        kept = layers.dropout(tf.constant(x), keep_prob=0.75, is_training=False)
        dropped = layers.dropout(tf.constant(x), keep_prob=0.75, seed=1)
        looked = layers.embed_sequence(tf.constant(ids), vocab_size=4, embed_dim=2)
        unique = layers.embed_sequence(tf.constant(ids), vocab_size=4, embed_dim=2, unique=True,
                                       scope="EmbedSequence", reuse=True)  # fmt: skip
        linear = layers.linear(tf.constant(x[:2] * [[1.0], [-1.0]]), 2, biases_initializer=None)
        with v1.Session() as session:
            session.run(v1.global_variables_initializer())
            kept, dropped, looked, unique, linear = session.run(
                [kept, dropped, looked, unique, linear]
            )
            table = session.run(v1.global_variables("EmbedSequence/embeddings")[0])
    np.testing.assert_array_equal(kept, x)
    np.testing.assert_allclose(np.unique(dropped), [0.0, 1 / 0.75], rtol=1e-6)
    assert 0.6 < (dropped > 0).mean() < 0.9
    np.testing.assert_allclose(looked, table[ids])
    np.testing.assert_allclose(unique, table[ids])
    np.testing.assert_allclose(linear[0], -linear[1])  # activation_fn=None: no relu
    assert (linear < 0).any()


def test_optimize_loss_steps_like_sgd_with_tf1_names():
    with tf.Graph().as_default():
        step = v1.train.get_or_create_global_step()
        w = v1.get_variable("w", initializer=tf.constant([1.0, -2.0]))
        loss = tf.reduce_sum(w**2)
        train_op = layers.optimize_loss(loss, step, learning_rate=0.1, optimizer="SGD")
        clipped = layers.optimize_loss(loss, step, 0.1, v1.train.GradientDescentOptimizer,
                                       clip_gradients=1.0, name="Clipped")  # fmt: skip
        assert "OptimizeLoss/learning_rate" in [v.op.name for v in v1.global_variables()]
        assert sorted(layers.OPTIMIZER_CLS_NAMES) == ["Adagrad", "Adam", "Ftrl", "Momentum",
                                                      "RMSProp", "SGD"]  # fmt: skip
        assert "global_gradient_norm" in layers.OPTIMIZER_SUMMARIES
        with v1.Session() as session:
            session.run(v1.global_variables_initializer())
            assert session.run(train_op) == pytest.approx(5.0)  # the loss before the step
            np.testing.assert_allclose(session.run(w), [0.8, -1.6])  # w - 0.1 * 2w
            session.run(clipped)  # gradient [1.6, -3.2], clipped to norm 1
            norm = np.hypot(1.6, 3.2)
            np.testing.assert_allclose(session.run(w), [0.8 - 0.16 / norm, -1.6 + 0.32 / norm],
                                       rtol=1e-5)  # fmt: skip
            assert session.run(step) == 2
    with tf.Graph().as_default(), pytest.raises(ValueError, match="Unknown optimizer name"):
        layers.optimize_loss(tf.constant(1.0), None, 0.1, "Adamax")


def _contrib_model_fn(features, labels, mode, params):
    tf1 = v1
    contrib = tf1.contrib
    training = mode == tf1.estimator.ModeKeys.TRAIN
    net = contrib.layers.conv2d(features["x"], 4, [3, 3])
    net = contrib.layers.batch_norm(net, decay=0.9, is_training=training)
    net = contrib.layers.max_pool2d(net, [2, 2])
    net = contrib.layers.flatten(net)
    net = contrib.layers.dropout(net, keep_prob=0.9, is_training=training)
    logits = contrib.layers.fully_connected(
        net, 2, activation_fn=None, weights_initializer=contrib.layers.xavier_initializer(),
        weights_regularizer=contrib.layers.l2_regularizer(1e-4),
    )  # fmt: skip
    loss = tf1.losses.sparse_softmax_cross_entropy(labels, logits)
    loss += tf1.losses.get_regularization_loss()
    train_op = contrib.layers.optimize_loss(loss, tf1.train.get_global_step(), 0.05, "Adam",
                                            summaries=["loss"])  # fmt: skip
    probability = tf.nn.softmax(logits)[:, 1]
    eval_metric_ops = {
        "accuracy": contrib.metrics.streaming_accuracy(tf.argmax(logits, 1), labels),
        "pearson": contrib.metrics.streaming_pearson_correlation(probability, labels),
    }
    return estimator.EstimatorSpec(mode, loss=loss, train_op=train_op,
                                   eval_metric_ops=eval_metric_ops)  # fmt: skip


def test_contrib_layers_and_metrics_train_and_evaluate_in_an_estimator(tmp_path):
    rng = np.random.default_rng(7)
    y = rng.integers(0, 2, size=64).astype("int32")
    x = (rng.normal(size=(64, 6, 6, 1)) + 1.5 * y[:, None, None, None]).astype("float32")

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).batch(16)

    estimator.install()
    try:
        est = make_estimator(tmp_path, _contrib_model_fn, tf_random_seed=1)
        est.train(lambda: input_fn().repeat(), steps=40)
        result = est.evaluate(input_fn)
    finally:
        estimator.uninstall()
    names = est.get_variable_names()
    for name in (
        "Conv/weights",
        "BatchNorm/moving_mean",
        "fully_connected/weights",
        "OptimizeLoss/learning_rate",
        "OptimizeLoss/fully_connected/weights/Adam",
    ):
        assert name in names, names
    assert np.abs(est.get_variable_value("BatchNorm/moving_mean")).max() > 0  # UPDATE_OPS ran
    assert result["accuracy"] > 0.9 and result["pearson"] > 0.8, result
    assert metrics.streaming_pearson_correlation.__name__ == "streaming_pearson_correlation"
