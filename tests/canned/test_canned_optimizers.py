"""The canned estimators' optimizers: tf.estimator 2.15's names, sparse (embedding) updates
that leave unseen rows alone, Keras optimizers' settings, schedules and defaults."""

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as estimator

fc = tf.feature_column
EMBEDDING = "dnn/input_from_feature_columns/input_layer/c_embedding/embedding_weights"


def letters_input(repeat=True):
    letters = np.array(["a", "b"] * 16)  # "c" and "d" never appear
    label = (letters == "a").astype(np.int64)

    def fn():
        dataset = tf.data.Dataset.from_tensor_slices(({"c": letters}, label))
        return dataset.repeat().batch(8) if repeat else dataset.batch(8)

    return fn


@pytest.mark.parametrize(
    "optimizer",
    ["Ftrl", "Adagrad", lambda: tf.keras.optimizers.SGD(0.1, momentum=0.9),
     lambda: tf.keras.optimizers.RMSprop(0.01, momentum=0.5)],
    ids=["ftrl", "adagrad", "sgd_momentum", "rmsprop_momentum"],
)  # fmt: skip
def test_sparse_updates_leave_rows_not_in_the_batch_alone(tmp_path, optimizer):
    column = fc.embedding_column(fc.categorical_column_with_vocabulary_list("c", list("abcd")), 3)
    # 16 units and a fixed seed: with 4 random ReLUs a row could get no gradient at all.
    config = estimator.RunConfig(tf_random_seed=7)
    est = estimator.DNNClassifier([16], [column], str(tmp_path), optimizer=optimizer, config=config)
    est.train(letters_input(), steps=5)
    first = tf.train.load_variable(str(tmp_path / "model.ckpt-0"), EMBEDDING)
    last = est.get_variable_value(EMBEDDING)
    np.testing.assert_array_equal(last[2:], first[2:])  # "c", "d": untouched
    for row in (0, 1):  # "a", "b": trained
        assert not np.allclose(last[row], first[row])


def test_keras_optimizers_get_tf_estimator_names_whatever_was_created_before(tmp_path):
    tf.keras.optimizers.Adam()  # takes Keras' automatic name "adam"; ours must not change
    columns = [fc.numeric_column("x")]
    x = np.linspace(-1, 1, 32).astype(np.float32)

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": x}, (x > 0).astype(np.int64))).batch(8)

    first = estimator.DNNClassifier([4], columns, str(tmp_path),
                                    optimizer=tf.keras.optimizers.Adam(0.01))  # fmt: skip
    first.train(input_fn, steps=2)
    assert "training/Adam/dnn/logits/kernel/m" in first.get_variable_names()
    again = estimator.DNNClassifier([4], columns, str(tmp_path),
                                    optimizer=tf.keras.optimizers.Adam(0.01))  # fmt: skip
    again.train(input_fn, steps=2)  # resumes: the same variable names
    assert again.get_variable_value("global_step") == 4
    named = estimator.DNNClassifier([4], columns, str(tmp_path / "named"),
                                    optimizer=tf.keras.optimizers.Adam(name="MyAdam"))  # fmt: skip
    named.train(input_fn, steps=1)
    assert "training/MyAdam/learning_rate" in named.get_variable_names()


def test_keras_optimizer_settings_are_honoured(tmp_path):
    columns = [fc.numeric_column("x")]
    x = np.linspace(-1, 1, 32).astype(np.float32)

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": x}, x * 3.0)).repeat().batch(8)

    def trained_bias(model_dir, optimizer):
        est = estimator.LinearRegressor(columns, str(tmp_path / model_dir), optimizer=optimizer)
        est.train(input_fn, steps=3)
        return est

    free = trained_bias("free", tf.keras.optimizers.SGD(0.5))
    clipped = trained_bias("clipped", tf.keras.optimizers.SGD(0.5, clipnorm=1e-6))
    kernel = "linear/linear_model/x/weights"
    assert abs(float(clipped.get_variable_value(kernel)[0, 0])) < 1e-5
    assert abs(float(free.get_variable_value(kernel)[0, 0])) > 1e-2
    # Weight decay only Keras implements: the optimizer trains as Keras' own.
    decayed = trained_bias("decayed", tf.keras.optimizers.AdamW(0.01, weight_decay=0.1))
    assert not any(name.startswith("training/") for name in decayed.get_variable_names())

    schedule = tf.keras.optimizers.schedules.ExponentialDecay(0.1, 10, 0.5)
    scheduled = trained_bias("scheduled", tf.keras.optimizers.Adam(schedule))
    names = scheduled.get_variable_names()
    assert "training/Adam/beta_1" in names and "training/Adam/learning_rate" not in names


def test_linear_optimizer_none_is_tf_estimators_default_ftrl(tmp_path):
    columns = [fc.numeric_column(k) for k in "abcd"]
    x = np.random.RandomState(0).randn(32, 4).astype(np.float32)
    features = {k: x[:, i] for i, k in enumerate("abcd")}
    est = estimator.LinearClassifier(columns, str(tmp_path), optimizer=None)
    est.train(lambda: tf.data.Dataset.from_tensor_slices((features, x[:, 0] > 0)).batch(8),
              steps=2)  # fmt: skip
    np.testing.assert_allclose(est.get_variable_value("training/Ftrl/learning_rate"), 0.2)
    keys = [f"f{i}" for i in range(30)]
    wide = estimator.LinearClassifier([fc.numeric_column(k) for k in keys], str(tmp_path / "w"),
                                      optimizer=None)  # fmt: skip
    data = {k: np.ones(8, np.float32) for k in keys}
    wide.train(lambda: tf.data.Dataset.from_tensor_slices((data, np.ones(8))).batch(8), steps=1)
    np.testing.assert_allclose(  # min(0.2, 1 / sqrt(30))
        wide.get_variable_value("training/Ftrl/learning_rate"), 1 / np.sqrt(30), rtol=1e-6
    )
