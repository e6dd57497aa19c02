"""tf.keras 2 names 2.15-era code used that Keras 3 renamed or moved, under install():
`to_categorical(y=..., dtype=...)` and `from tensorflow.python.keras import models / layers`
(TensorFlow's frozen tf.keras 2 copy, whose layers do not mix with Keras 3's)."""

import keras
import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as estimator

v1 = tf.compat.v1


def test_to_categorical_takes_tf_keras_2_keywords_and_float32_default(installed):
    one_hot = tf.keras.utils.to_categorical(y=np.array([0, 2, 1]), num_classes=3)
    np.testing.assert_array_equal(one_hot, np.eye(3)[[0, 2, 1]])
    assert one_hot.dtype == np.float32  # tf.keras 2's default (Keras 3 gives float64)
    assert keras.utils.to_categorical([1, 0], dtype="int32").dtype == np.int32
    np.testing.assert_array_equal(keras.utils.to_categorical(x=[1], num_classes=2), [[0, 1]])
    with pytest.raises(TypeError, match="takes the class indices once"):
        keras.utils.to_categorical([1], y=[1])


def test_without_install_to_categorical_is_keras_3s():
    estimator.install()
    estimator.uninstall()
    with pytest.raises(TypeError, match="unexpected keyword argument 'y'"):
        keras.utils.to_categorical(y=[0, 1])


def test_legacy_keras_models_and_layers_are_keras_3_and_mix_with_tf_keras(installed, tmp_path):
    from tensorflow.python.keras import layers, models

    model = models.Sequential()
    model.add(tf.keras.layers.Dense(4, activation="relu", input_shape=(3,)))
    model.add(layers.Dense(1))
    assert isinstance(model, keras.Model)
    model.compile(optimizer="sgd", loss="mse")
    est = tf.keras.estimator.model_to_estimator(keras_model=model, model_dir=str(tmp_path))
    x = np.random.RandomState(0).rand(8, 3).astype(np.float32)
    est.train(lambda: tf.data.Dataset.from_tensors((x, x[:, :1])).repeat(), steps=2)
    assert est.get_variable_value("global_step") == 2
    # TensorFlow's TF1 RNN cells, which use that package's backend, still work.
    cell = v1.nn.rnn_cell.BasicLSTMCell(3)
    outputs, _ = v1.nn.dynamic_rnn(cell, tf.ones([2, 4, 3]), dtype=tf.float32)
    assert outputs.shape == (2, 4, 3)


def test_uninstall_gives_tensorflow_its_legacy_keras_back():
    estimator.install()
    estimator.uninstall()
    from tensorflow.python.keras import models

    assert models is not keras.models and models.__name__ == "tensorflow.python.keras.models"


def test_multi_head_attention_builds_from_a_signature_as_in_tf_keras_2(installed):
    layer = tf.keras.layers.MultiHeadAttention(num_heads=2, key_dim=4, output_shape=6)
    layer._build_from_signature(query=tf.TensorShape([3, 5, 8]), value=tf.zeros([3, 5, 8]))
    assert layer.built
    out = layer(tf.ones([3, 5, 8]), tf.ones([3, 5, 8]))
    assert out.shape == (3, 5, 6)


def test_uninstall_takes_build_from_signature_away():
    estimator.install()
    estimator.uninstall()
    assert not hasattr(tf.keras.layers.MultiHeadAttention, "_build_from_signature")


def test_legacy_optimizers_are_keras_3s_and_train_a_canned_estimator(installed, tmp_path):
    optimizer = tf.keras.optimizers.legacy.Ftrl(learning_rate=0.1, l1_regularization_strength=0.1)
    assert isinstance(optimizer, keras.optimizers.Ftrl)
    column = tf.feature_column.numeric_column("x")
    ftrl = tf.keras.optimizers.legacy.Ftrl
    est = tf.estimator.LinearRegressor(
        [column], model_dir=str(tmp_path), optimizer=lambda: ftrl(0.1)
    )
    x = np.arange(8, dtype="float32")
    est.train(lambda: tf.data.Dataset.from_tensor_slices(({"x": x}, 2 * x)).batch(4), steps=2)
    assert est.get_variable_value("global_step") == 2


def test_a_legacy_optimizer_takes_a_learning_rate_the_model_fn_computes(installed, tmp_path):
    # The TF1 half of TensorFlow's canned-estimator migration guide: a tf1 exponential decay
    # of the global step, which Keras 3's optimizers refuse.
    def optimizer():
        rate = v1.train.exponential_decay(0.1, v1.train.get_global_step(), 2, 0.5)
        return tf.keras.optimizers.legacy.Ftrl(learning_rate=rate)

    est = tf.estimator.LinearRegressor(
        [tf.feature_column.numeric_column("x")], model_dir=str(tmp_path), optimizer=optimizer
    )
    x = np.arange(8, dtype="float32")
    est.train(lambda: tf.data.Dataset.from_tensor_slices(({"x": x}, 2 * x)).batch(4), steps=2)
    names = [name for name, _ in tf.train.list_variables(str(tmp_path))]
    assert "training/Ftrl/linear/linear_model/x/weights/accumulator" in names
    assert "training/Ftrl/learning_rate" not in names  # computed each step, not a variable
    assert est.get_variable_value("linear/linear_model/x/weights")[0, 0] != 0.0
    assert est.get_variable_value("global_step") == 2


def test_the_legacy_optimizer_class_makes_a_graph_optimizer_only_for_a_graph_tensor():
    from keras_estimator.canned import optimizers
    from keras_estimator.dropin.tf_keras2 import legacy_optimizer_class

    sgd = legacy_optimizer_class("SGD")
    assert issubclass(sgd, keras.optimizers.SGD)
    assert isinstance(sgd(tf.constant(0.5)), keras.optimizers.SGD)  # eager: a number
    with tf.Graph().as_default():
        made = sgd(learning_rate=tf.constant(0.5), momentum=0.9)
    assert isinstance(made, optimizers.SGD) and made.hyper["momentum"] == 0.9


def test_deterministic_random_test_tool_gives_2_15s_numbers(installed):
    """The values tf.keras 2.15's tool gave (checked in its venv)."""
    expected = {
        "constant": ([0.83546, 0.9163, 0.49465], [-0.30102, 0.51859], 0),
        "num_random_ops": ([0.83546, 0.9163, 0.49465], [-1.49995, -1.24205], 2),
    }
    for mode, (uniform, normal, op_seed) in expected.items():
        tool = tf.compat.v1.keras.utils.DeterministicRandomTestTool(mode=mode)
        with tool.scope():
            a, b = tf.random.uniform([3]), tf.random.normal([2])
        np.testing.assert_allclose(a, uniform, atol=1e-5)
        np.testing.assert_allclose(b, normal, atol=1e-5)
        assert tool.operation_seed == op_seed
    with pytest.raises(ValueError, match="constant"):
        tf.compat.v1.keras.utils.DeterministicRandomTestTool(mode="other")


def test_a_legacy_optimizers_config_rebuilds_keras_3s_optimizer(installed):
    # clone_model of a compiled model, and saving one, go through the optimizer's config;
    # Keras 3's own `keras.optimizers.legacy.Adagrad` is a stub that raises.
    optimizer = tf.keras.optimizers.legacy.Adagrad(learning_rate=0.25)
    rebuilt = keras.optimizers.deserialize(keras.optimizers.serialize(optimizer))
    assert type(rebuilt) is keras.optimizers.Adagrad
    assert rebuilt.get_config()["learning_rate"] == 0.25


def test_tf_keras_2_weighted_loss_helpers_give_2_15s_values(installed):
    """The values tf.keras 2.15's compute_weighted_loss gave (checked in its venv)."""
    weighted_loss = tf.keras.__internal__.losses.compute_weighted_loss
    losses = tf.constant([1.0, 2.0, 3.0])
    column = tf.constant([[1.0], [2.0], [0.0]])  # a trailing axis of 1 too many
    assert float(weighted_loss(losses, column)) == pytest.approx(5 / 3)
    assert float(weighted_loss(losses, column, reduction="sum")) == 5.0
    assert weighted_loss(losses, column, reduction="none").numpy().tolist() == [1, 4, 0]
    grid = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    assert float(weighted_loss(grid, tf.constant([1.0, 0.0]))) == 0.75  # one axis too few
    assert float(weighted_loss(grid, 2.0, reduction="auto")) == 5.0
    assert float(weighted_loss(tf.constant([1.0, 2.0]))) == 1.5
    with pytest.raises(ValueError, match="Unknown loss reduction 'mean'"):
        weighted_loss(losses, reduction="mean")

    class Own(tf.keras.losses.Loss):
        def call(self, y_true, y_pred):
            return y_pred

    assert Own()._get_reduction() == "sum_over_batch_size"
    assert Own(reduction="sum")._get_reduction() == "sum"


def test_uninstall_takes_the_tf_keras_2_loss_helpers_away():
    estimator.install()
    estimator.uninstall()
    assert not hasattr(tf.keras, "__internal__")
    assert not hasattr(keras.losses.Loss, "_get_reduction")


def test_a_keras_metric_turns_into_a_tf1_value_and_update_op_as_in_tf_keras_2(installed):
    # Library code written for tf.keras 2 (AdaNet's ensembles) turns a head's Keras metric
    # into `(metric.result(), metric.updates[0])`, keys its variables by `ref()` and
    # initializes them in a TF1 graph of its own.
    with tf.Graph().as_default():
        metric = keras.metrics.Mean()
        assert metric.updates == []  # nothing updated it in this graph yet
        metric.update_state(tf.constant([1.0, 3.0]))
        value, (update,) = metric.result(), metric.updates
        by_ref = {v.experimental_ref(): v for v in metric.variables}
        assert len(by_ref) == len(metric.variables) == 2
        assert metric.variables[0].ref() == metric.variables[0].experimental_ref()
        init = v1.variables_initializer(list(by_ref.values()))
        with v1.Session() as session:
            session.run(init)
            session.run(update)
            session.run(update)
            assert session.run(value) == 2.0
    assert keras.metrics.Mean().updates == []  # eagerly: updates happen at once


def test_without_install_keras_metrics_have_no_tf_keras_2_updates():
    estimator.install()
    estimator.uninstall()
    assert not hasattr(keras.metrics.Mean(), "updates")
    assert not hasattr(keras.Variable(1.0), "experimental_ref")


def test_keras_layers_in_each_tf1_graph_of_ones_own_are_named_from_scratch(installed):
    # tf.keras 2 counted auto-names per graph: a library that rebuilds its model in a new
    # tf.Graph (AdaNet's bookkeeping) finds its variables under the names of the first build.
    def build():
        with tf.Graph().as_default():
            layer = keras.layers.Dense(2)
            layer(tf.zeros([1, 3]))
            return layer.name

    assert build() == build() == "dense"
    eager_first, eager_second = keras.layers.Dense(1), keras.layers.Dense(1)
    assert eager_first.name != eager_second.name  # eagerly Keras 3 counts once per process


def test_sync_batch_normalization_is_keras_3s_synchronized_batch_norm(installed):
    layer_class = tf.keras.layers.experimental.SyncBatchNormalization
    assert issubclass(layer_class, keras.layers.BatchNormalization)

    class Frozen(layer_class):  # a library's subclass: its own __init__ keyword, call override
        def __init__(self, training=None, **kwargs):
            super().__init__(**kwargs)
            self._training = training

        def call(self, inputs, training=None):
            return super().call(inputs, training=False if self._training is False else training)

    x = tf.constant([[1.0, 2.0], [3.0, 6.0]])
    layer = Frozen(training=None, momentum=0.5, epsilon=1e-5, center=True, scale=True)
    out = layer(x, training=True)
    assert layer.synchronized
    np.testing.assert_allclose(out, [[-1.0, -1.0], [1.0, 1.0]], atol=1e-3)  # batch statistics
    np.testing.assert_allclose(layer.moving_mean, [1.0, 2.0])  # 0.5 * 0 + 0.5 * [2, 4]
    frozen = Frozen(training=False)
    np.testing.assert_allclose(frozen(x, training=True), x / np.sqrt(1 + 1e-3), rtol=1e-5)
    again = layer_class.from_config(layer_class(momentum=0.9).get_config())
    assert again.synchronized and again.momentum == 0.9
    with pytest.raises(ValueError, match="always synchronizes"):
        layer_class(synchronized=False)
    assert tf.keras.layers.experimental.EinsumDense is keras.layers.EinsumDense


def test_without_install_tf_keras_layers_has_no_experimental():
    estimator.install()
    estimator.uninstall()
    assert not hasattr(tf.keras.layers, "experimental")


def test_set_learning_phase_is_kept_and_read_back(installed):
    tf.keras.backend.set_learning_phase(True)
    assert tf.keras.backend.learning_phase() == 1
    tf.keras.backend.set_learning_phase(0)
    assert tf.keras.backend.learning_phase() == 0
    with pytest.raises(ValueError, match="0 or 1"):
        tf.keras.backend.set_learning_phase(2)


def test_keras_metrics_in_a_tf1_graph_of_ones_own_are_in_no_collection(installed, tmp_path):
    # tf.keras 2 made metric variables in no collection: a library's Saver() over its own
    # graph (AdaNet's bookkeeping) neither saves nor restores them.
    with tf.Graph().as_default():
        w = v1.get_variable("w", [], initializer=v1.ones_initializer())
        metric = keras.metrics.Mean(name="mean")
        metric.update_state(w)
        assert [v.name for v in v1.global_variables()] == ["w:0"]
        with v1.Session() as session:
            session.run(v1.global_variables_initializer())
            path = v1.train.Saver().save(session, str(tmp_path / "model.ckpt"))
    assert [name for name, _ in tf.train.list_variables(path)] == ["w"]
