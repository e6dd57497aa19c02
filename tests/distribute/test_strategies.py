"""RunConfig(train_distribute=MirroredStrategy) on two logical CPUs (see conftest.py)."""

import numpy as np
import pytest
import tensorflow as tf2
import tensorflow.compat.v1 as tf
from helpers import dataset_input_fn, make_estimator, mirrored_strategy

import keras_estimator as estimator


def linear_model_fn(features, labels, mode, params):
    predictions = tf.layers.dense(features["x"], 1, name="linear")[:, 0]
    if mode == estimator.ModeKeys.PREDICT:
        return estimator.EstimatorSpec(mode, predictions={"y": predictions})
    loss = tf.reduce_mean(tf.square(predictions - labels))
    if mode == estimator.ModeKeys.EVAL:
        return estimator.EstimatorSpec(
            mode,
            loss=loss,
            eval_metric_ops={"mae": tf.metrics.mean_absolute_error(labels, predictions)},
        )
    optimizer = tf.train.GradientDescentOptimizer(0.1)
    train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())
    hook = tf.train.LoggingTensorHook({"replica_loss": loss}, every_n_iter=1)
    params["hooks"].append(hook)
    return estimator.EstimatorSpec(mode, loss=loss, train_op=train_op, training_hooks=[hook])


@pytest.fixture
def regression_data():
    rng = np.random.RandomState(1)
    x = rng.randn(64, 4).astype(np.float32)
    y = (x @ np.array([1.0, -2.0, 0.5, 3.0], np.float32) + 0.3).astype(np.float32)
    return x, y


def linear_estimator(model_dir, strategy=None):
    """linear_model_fn's Estimator, seeded, under `strategy` (None: no strategy)."""
    return make_estimator(
        model_dir,
        linear_model_fn,
        params={"hooks": []},
        train_distribute=strategy,
        tf_random_seed=7,
    )


def test_mirrored_training_equals_one_device_training_on_the_global_batch(
    tmp_path, regression_data
):
    x, y = regression_data
    strategy = mirrored_strategy()
    mirrored = linear_estimator(tmp_path / "mirrored", strategy)
    # input_fn's batches are per-replica batches, as with tf.estimator: 2 x 8 per step.
    mirrored.train(dataset_input_fn(x, y, 8), steps=100)
    assert mirrored.get_variable_value("global_step") == 4  # 64 examples / (2 x 8)
    single = linear_estimator(tmp_path / "single")
    single.train(dataset_input_fn(x, y, 16), steps=100)
    assert single.get_variable_value("global_step") == 4
    # Gradients are averaged over the replicas: the same weights as one device on 16.
    for name in ("linear/kernel", "linear/bias"):
        np.testing.assert_allclose(
            mirrored.get_variable_value(name), single.get_variable_value(name), rtol=1e-5
        )
    # Same TF1 names in the checkpoint as without a strategy.
    assert mirrored.get_variable_names() == single.get_variable_names()

    # evaluate and predict work on the mirrored variables, over every example.
    got, want = (e.evaluate(dataset_input_fn(x, y, 16)) for e in (mirrored, single))
    assert got["global_step"] == 4
    np.testing.assert_allclose(got["mae"], want["mae"], rtol=1e-5)
    got_p, want_p = (
        [p["y"] for p in e.predict(dataset_input_fn(x[:10], batch_size=4))]
        for e in (mirrored, single)
    )
    assert len(got_p) == 10
    np.testing.assert_allclose(got_p, want_p, rtol=1e-5)

    # Training resumes from the checkpoint under the strategy.
    mirrored.train(dataset_input_fn(x, y, 8, repeat=True), steps=3)
    assert mirrored.get_variable_value("global_step") == 7


def test_input_context_and_hooks_under_mirrored(tmp_path, regression_data):
    x, y = regression_data
    contexts, steps = [], []

    def input_fn(input_context):
        contexts.append(
            (
                input_context.num_input_pipelines,
                input_context.input_pipeline_id,
                input_context.num_replicas_in_sync,
                input_context.get_per_replica_batch_size(16),
            )
        )
        return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).repeat().batch(8)

    class StepHook(tf.train.SessionRunHook):
        def begin(self):
            self.step = tf.train.get_global_step()

        def before_run(self, run_context):
            return tf.train.SessionRunArgs(self.step)

        def after_run(self, run_context, run_values):
            steps.append(int(run_values.results))

    class StepByNameHook(tf.train.SessionRunHook):
        def __init__(self):
            self.seen = []

        def before_run(self, run_context):
            return tf.train.SessionRunArgs(["global_step:0", "linear/kernel:0"])

        def after_run(self, run_context, run_values):
            self.seen.append(int(run_values.results[0]))
            self.kernel_shape = run_values.results[1].shape

    strategy = mirrored_strategy()
    est = linear_estimator(tmp_path, strategy)
    by_name = StepByNameHook()
    est.train(input_fn, steps=3, hooks=[StepHook(), by_name])
    assert contexts == [(1, 0, 2, 8)]
    # The global step counts global steps, once each; a hook reads the step each run
    # starts from (as 2.15.1's session did), by object and by name under the strategy.
    assert steps == [0, 1, 2]
    assert by_name.seen == [0, 1, 2]
    assert by_name.kernel_shape == (4, 1)
    assert est.get_variable_value("global_step") == 3


def test_one_device_strategy_and_eval_distribute(tmp_path, regression_data):
    x, y = regression_data
    one = linear_estimator(tmp_path / "one", tf2.distribute.OneDeviceStrategy("/cpu:0"))
    one.train(dataset_input_fn(x, y, 16), steps=100)
    single = linear_estimator(tmp_path / "single")
    single.train(dataset_input_fn(x, y, 16), steps=100)
    assert one.get_variable_value("global_step") == 4
    np.testing.assert_allclose(
        one.get_variable_value("linear/kernel"),
        single.get_variable_value("linear/kernel"),
        rtol=1e-6,
    )
    # eval_distribute: evaluation reads the mirrored variables and sees every example.
    strategy = mirrored_strategy()
    both = make_estimator(
        tmp_path / "single",
        linear_model_fn,
        params={"hooks": []},
        train_distribute=strategy,
        eval_distribute=strategy,
    )
    got, want = both.evaluate(dataset_input_fn(x, y, 8)), single.evaluate(dataset_input_fn(x, y, 8))
    np.testing.assert_allclose(got["mae"], want["mae"], rtol=1e-6)
    with pytest.raises(ValueError, match="train_distribute must be a tf.distribute.Strategy"):
        estimator.Estimator(
            linear_model_fn, config=estimator.RunConfig(train_distribute="mirrored"), params={}
        )


@pytest.mark.parametrize("optimizer", ["Adagrad", lambda: tf2.keras.optimizers.Adam(0.05)])
def test_canned_dnn_classifier_under_mirrored_equals_one_device(tmp_path, optimizer):
    rng = np.random.RandomState(0)
    x = rng.randn(64, 2).astype(np.float32)
    y = (x[:, 0] > 0).astype(np.int64)
    columns = [tf2.feature_column.numeric_column("a"), tf2.feature_column.numeric_column("b")]

    def input_fn(batch):
        return lambda: (
            tf.data.Dataset.from_tensor_slices(({"a": x[:, 0], "b": x[:, 1]}, y))
            .repeat()
            .batch(batch)
        )

    weights = {}
    for name, strategy, batch in (
        ("single", None, 16),
        ("mirrored", mirrored_strategy(), 8),
    ):
        est = estimator.DNNClassifier(
            [4], columns, str(tmp_path / name), optimizer=optimizer,
            config=estimator.RunConfig(train_distribute=strategy, tf_random_seed=3),
        )  # fmt: skip
        est.train(input_fn(batch), steps=3)
        weights[name] = {n: est.get_variable_value(n) for n in est.get_variable_names()}
    assert weights["single"].keys() == weights["mirrored"].keys()
    for name, value in weights["single"].items():
        np.testing.assert_allclose(weights["mirrored"][name], value, rtol=1e-5, atol=1e-7)


def test_a_tf1_mirrored_strategy_runs_as_its_tf2_counterpart(tmp_path, regression_data):
    """tf.compat.v1.distribute.MirroredStrategy in RunConfig (TensorFlow's r1 distribute
    guide): trained under the TF 2 strategy over the same devices, one per v1 object."""
    from keras_estimator.distribute.strategies import _as_v2

    x, y = regression_data
    v1_strategy = tf.compat.v1.distribute.MirroredStrategy(["/cpu:0"])
    converted = _as_v2(v1_strategy)
    assert (
        isinstance(converted, tf2.distribute.MirroredStrategy) and _as_v2(v1_strategy) is converted
    )
    est = linear_estimator(tmp_path, v1_strategy)
    est.train(dataset_input_fn(x, y, 16), steps=3)
    assert est.get_variable_value("global_step") == 3


def test_a_tf1_strategy_an_estimator_ran_under_keeps_its_own_tf1_api(tmp_path, regression_data):
    """Only the Estimator reads the v1 strategy as a TF 2 one: the object stays a v1 strategy,
    and code of its own still runs a TF1 Session loop under it in a graph (the r1 guide's
    last part does so in graph mode, which keras_estimator keeps off: see tf1_switches)."""
    x, y = regression_data
    v1_strategy = tf.distribute.MirroredStrategy(["/cpu:0"])
    linear_estimator(tmp_path, v1_strategy).train(dataset_input_fn(x, y, 16), steps=1)
    assert type(v1_strategy).__name__ == "MirroredStrategyV1"
    with tf2.Graph().as_default(), v1_strategy.scope():
        batches = tf.data.Dataset.from_tensors(([1.0], [2.0])).repeat(6).batch(2)
        iterator = v1_strategy.make_dataset_iterator(batches)
        weight = tf.get_variable("w", initializer=0.0)

        def step(inputs):
            features, labels = inputs
            loss = tf.reduce_mean(tf.square(weight * features - labels))
            return tf.train.GradientDescentOptimizer(0.1).minimize(loss), loss

        train_op, loss = v1_strategy.experimental_run(step, iterator)
        loss = v1_strategy.reduce(tf2.distribute.ReduceOp.SUM, loss, axis=None)
        with tf.Session() as session:
            session.run([tf.global_variables_initializer(), iterator.initializer])
            losses = [session.run([train_op, loss])[1] for _ in range(3)]
    np.testing.assert_allclose(losses, [4.0, 2.56, 1.6384], rtol=1e-5)
