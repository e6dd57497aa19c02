"""DenseFeatures: tf.keras.layers.DenseFeatures on Keras 3, over tf.feature_column columns."""

import keras
import numpy as np
import pytest
import tensorflow as tf2
import tensorflow.compat.v1 as tf
from helpers import make_estimator

import keras_estimator as estimator
from keras_estimator import DenseFeatures, export

fc = tf2.feature_column
EMBEDDING = np.arange(30, dtype=np.float32).reshape(10, 3) / 10.0


def _columns():
    age = fc.numeric_column("age")
    return [
        fc.indicator_column(fc.categorical_column_with_vocabulary_list("edu", ["a", "b", "c"])),
        age,
        fc.embedding_column(
            fc.categorical_column_with_hash_bucket("job", 10),
            3,
            initializer=tf.constant_initializer(EMBEDDING),
        ),
        fc.bucketized_column(age, [30, 50]),
        fc.numeric_column("hours", shape=(2,)),
    ]


FEATURES = {
    "age": np.array([[20.0], [40.0], [60.0], [35.0]], np.float32),
    "edu": np.array([["a"], ["b"], ["c"], ["zz"]]),
    "job": np.array([["x"], ["y"], ["z"], ["w"]]),
    "hours": np.array([[1, 2], [3, 4], [5, 6], [7, 8]], np.float32),
}
LABELS = np.array([[0.0], [1.0], [1.0], [0.0]], np.float32)


def _input_layer_values():
    """What tf.compat.v1.feature_column.input_layer gives on the same columns (TF1 graph)."""
    with tf.Graph().as_default():
        features = {k: tf.constant(v) for k, v in FEATURES.items()}
        output = tf.feature_column.input_layer(features, _columns())
        with tf.Session() as session:
            session.run([tf.global_variables_initializer(), tf.tables_initializer()])
            return session.run(output)


def test_outputs_equal_input_layer_in_column_name_order():
    layer = DenseFeatures(_columns())
    parts = {}
    values = layer(FEATURES, cols_to_output_tensors=parts).numpy()
    assert values.shape == (4, 1 + 3 + 3 + 3 + 2)
    np.testing.assert_allclose(values, _input_layer_values(), rtol=1e-6)
    assert [c.name for c in parts] == ["age", "age_bucketized", "edu_indicator",
                                       "hours", "job_embedding"]  # fmt: skip
    assert [w.name for w in layer.trainable_weights] == ["embedding_weights"]
    assert not DenseFeatures(_columns(), trainable=False).trainable


def test_rejects_categorical_columns_and_non_dicts():
    with pytest.raises(ValueError, match="indicator_column or embedding_column"):
        DenseFeatures([fc.categorical_column_with_hash_bucket("job", 10)])
    with pytest.raises(ValueError, match="dict of feature name"):
        DenseFeatures([fc.numeric_column("age")])(tf2.constant([[1.0]]))


def _dataset():
    return tf2.data.Dataset.from_tensor_slices((FEATURES, LABELS)).batch(2).repeat()


def _functional():
    inputs = {
        "age": keras.Input((1,), name="age"),
        "edu": keras.Input((1,), dtype="string", name="edu"),
        "job": keras.Input((1,), dtype="string", name="job"),
        "hours": keras.Input((2,), name="hours"),
    }
    outputs = keras.layers.Dense(1)(DenseFeatures(_columns())(inputs))
    return keras.Model(inputs, outputs)


class SubclassedModel(keras.Model):
    def __init__(self):
        super().__init__()
        self.features = DenseFeatures(_columns())
        self.dense = keras.layers.Dense(1)

    def call(self, inputs):
        return self.dense(self.features(inputs))


MODELS = {
    "functional": _functional,
    "sequential": lambda: keras.Sequential([DenseFeatures(_columns()), keras.layers.Dense(1)]),
    "subclassed": SubclassedModel,
}


@pytest.mark.parametrize("kind", sorted(MODELS))
def test_keras_model_trains_with_fit_and_saves_and_loads_weights(tmp_path, kind):
    keras.utils.set_random_seed(1)
    model = MODELS[kind]()
    model.compile(keras.optimizers.Adam(0.05), "mse")
    model(FEATURES)  # built
    before = [w.numpy().copy() for w in model.trainable_weights]
    history = model.fit(_dataset(), steps_per_epoch=4, epochs=2, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0]
    embedding = [w for w in model.trainable_weights if w.name == "embedding_weights"]
    assert len(embedding) == 1 and not np.allclose(embedding[0].numpy(), EMBEDDING)
    assert len(before) == 3  # embedding, dense kernel, dense bias
    path = str(tmp_path / "model.weights.h5")
    model.save_weights(path)
    expected = model.predict(tf2.data.Dataset.from_tensors(FEATURES), verbose=0)
    other = MODELS[kind]()
    other(FEATURES)
    other.load_weights(path)
    served = other.predict(tf2.data.Dataset.from_tensors(FEATURES), verbose=0)
    np.testing.assert_allclose(served, expected, rtol=1e-6)


def _model_fn(features, labels, mode, params):
    net = DenseFeatures(_columns())(features)
    predictions = tf.layers.dense(net, 1)
    if mode == estimator.ModeKeys.PREDICT:
        return estimator.EstimatorSpec(mode, predictions={"y": predictions})
    loss = tf.losses.mean_squared_error(labels, predictions)
    train_op = tf.train.AdamOptimizer(0.05).minimize(loss, tf.train.get_global_step())
    return estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def test_inside_a_model_fn_its_embedding_trains_and_is_checkpointed(tmp_path):
    est = make_estimator(tmp_path, _model_fn)
    est.train(lambda: _dataset(), steps=5)
    names = dict(tf2.train.list_variables(est.latest_checkpoint()))
    (embedding,) = [n for n in names if n.endswith("job_embedding/embedding_weights")]
    assert names[embedding] == [10, 3]
    trained = tf2.train.load_variable(est.latest_checkpoint(), embedding)
    assert not np.allclose(trained, EMBEDDING)
    loss = est.evaluate(lambda: _dataset(), steps=2)["loss"]
    assert np.isfinite(loss)
    predictions = list(est.predict(lambda: tf2.data.Dataset.from_tensors(FEATURES)))
    assert len(predictions) == 4
    specs = {k: tf2.TensorSpec((None, *v.shape[1:]), tf2.as_dtype(v.dtype) if v.dtype.kind != "U"
                               else tf2.string) for k, v in FEATURES.items()}  # fmt: skip
    path = est.export_saved_model(
        str(tmp_path / "export"), export.build_raw_serving_input_receiver_fn(specs)
    ).decode()  # its vocabulary table travels with it
    served = tf2.saved_model.load(path).signatures["serving_default"](
        **{k: tf2.constant(v) for k, v in FEATURES.items()}
    )
    np.testing.assert_allclose(
        served["y"].numpy(), np.stack([p["y"] for p in predictions]), rtol=1e-5
    )


def test_tf_keras_layers_dense_features_after_install():
    import tensorflow as tf_module

    assert not hasattr(tf_module.keras.layers, "DenseFeatures")
    estimator.install()
    try:
        assert tf_module.keras.layers.DenseFeatures is DenseFeatures
    finally:
        estimator.uninstall()
    assert not hasattr(tf_module.keras.layers, "DenseFeatures")


def test_plain_python_values_are_taken_as_tf_keras_2_took_them():
    column = tf.feature_column.indicator_column(
        tf.feature_column.categorical_column_with_identity("type", 3)
    )
    layer = DenseFeatures([column])
    np.testing.assert_array_equal(layer({"type": [0, 1, 2]}), np.eye(3, dtype="float32"))
