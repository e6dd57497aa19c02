"""2.15's tools/checkpoint_converter: a canned estimator checkpoint trained with v1
optimizers, converted, is restored by the v2 canned estimators with the same predictions,
and training goes on as the v1 optimizer would have (summed loss on both sides)."""

import json
import os

import keras
import numpy as np
import pytest
import tensorflow as tf
from helpers import FIXTURES, assert_predictions_match, iris_columns, iris_features, iris_like

import keras_estimator
from keras_estimator import v1
from keras_estimator.dropin.estimator_tree.tools import analytics
from keras_estimator.dropin.estimator_tree.tools import checkpoint_converter as cc

FIXTURE = os.path.join(FIXTURES, "canned_v1_tf_estimator_2_15")
RNG = np.random.RandomState(0)
X = RNG.randn(48, 3).astype(np.float32)
Y_CLASS = (X.sum(axis=1) > 0).astype(np.int64)
Y_REG = X.sum(axis=1, keepdims=True).astype(np.float32)
SUM = tf.losses.Reduction.SUM  # v1 canned estimators sum the loss


def columns():
    return [tf.feature_column.numeric_column("x", shape=[3])]


def train_input(labels):
    return lambda: tf.data.Dataset.from_tensor_slices(({"x": X}, labels)).repeat().batch(16)


def predict_input():
    return tf.data.Dataset.from_tensor_slices({"x": X[:8]}).batch(8)


def predictions(est, key):
    return np.array([p[key] for p in est.predict(predict_input)])


def weights(est):
    return {n: est.get_variable_value(n) for n in est.get_variable_names()
            if not n.startswith("training/") and n.rsplit("/", 1)[-1] not in ("Adagrad", "Ftrl",
                                                                             "Ftrl_1")}  # fmt: skip


def test_constants_are_2_15s_with_keras_3_optimizers():
    assert cc.OPT_NAME_V1_TO_V2 == {"Adagrad": "Adagrad", "RMSProp": "RMSprop", "Ftrl": "Ftrl",
                                    "Adam": "Adam", "SGD": "SGD"}  # fmt: skip
    assert cc.OPT_VAR_NAME_V1_TO_V2["Ftrl"] == {"Ftrl": "accumulator", "Ftrl_1": "linear"}
    assert cc.OPT_VAR_NAME_V1_TO_V2["RMSProp"] == {"RMSProp": "rms", "RMSProp_1": None}
    assert cc.HP_IN_CKPT == {"Adam": {"beta1_power": "training/Adam/beta_1",
                                      "beta2_power": "training/Adam/beta_2"}}  # fmt: skip
    assert cc.HP_IN_GRAPH["Adagrad"] == ["decay", "learning_rate"]
    assert sorted(cc.OPT_V2_INSTANCE) == ["Adagrad", "Adam", "Ftrl", "RMSProp", "SGD"]
    sgd = cc.OPT_V2_INSTANCE["SGD"]
    assert isinstance(sgd, keras.optimizers.SGD) and cc.OPT_V2_INSTANCE["SGD"] is sgd
    assert sgd.get_config()["learning_rate"] == pytest.approx(0.01)


def test_our_v1_dnn_classifier_converted_restores_in_v2_and_trains_on_as_v1(tmp_path):
    v1_dir, v2_dir = str(tmp_path / "v1"), str(tmp_path / "v2")
    old = v1.DNNClassifier([5, 4], columns(), model_dir=v1_dir, optimizer="Adagrad")
    old.train(train_input(Y_CLASS), steps=5)
    v1_logits = predictions(old, "logits")

    cc.convert_checkpoint("dnn", os.path.join(v1_dir, "model.ckpt-5"),
                          os.path.join(v1_dir, "graph.pbtxt"),
                          os.path.join(v2_dir, "model.ckpt-5"))  # fmt: skip
    converted = dict(tf.train.list_variables(v2_dir))
    assert converted["training/Adagrad/dnn/hiddenlayer_0/kernel/accumulator"] == [3, 5]
    assert "dnn/hiddenlayer_0/kernel/t_0/Adagrad" not in converted
    reader = tf.train.load_checkpoint(v2_dir)
    np.testing.assert_array_equal(
        reader.get_tensor("training/Adagrad/dnn/logits/kernel/accumulator"),
        old.get_variable_value("dnn/logits/kernel/t_0/Adagrad"),
    )
    # The v1 learning rate, read from the graph (2.15's converter wrote Keras' 0.001).
    assert reader.get_tensor("training/Adagrad/learning_rate") == pytest.approx(0.05)
    assert reader.get_tensor("training/Adagrad/decay") == 0.0
    assert reader.get_tensor("global_step") == 5

    new = keras_estimator.DNNClassifier([5, 4], columns(), model_dir=v2_dir,
                                        optimizer="Adagrad", loss_reduction=SUM)  # fmt: skip
    np.testing.assert_allclose(predictions(new, "logits"), v1_logits, rtol=1e-6, atol=1e-6)
    assert new.evaluate(train_input(Y_CLASS), steps=1)["global_step"] == 5

    # Two more steps each: the converted accumulators and rate go on as v1's did.
    old.train(train_input(Y_CLASS), steps=2)
    new.train(train_input(Y_CLASS), steps=2)
    assert sorted(new.get_variable_names()) == sorted(converted)  # nothing missing, no extra
    for name, value in weights(old).items():
        np.testing.assert_allclose(new.get_variable_value(name), value, atol=1e-6, err_msg=name)


def test_linear_regressor_ftrl_converted_from_its_meta_graph_by_the_command_line(tmp_path):
    v1_dir, v2_dir = str(tmp_path / "v1"), str(tmp_path / "v2")
    old = v1.LinearRegressor(columns(), model_dir=v1_dir)
    old.train(train_input(Y_REG), steps=4)
    source = os.path.join(v1_dir, "model.ckpt-4")

    assert cc.main(["linear", source, source + ".meta", os.path.join(v2_dir, "model.ckpt-4")]) == 0
    reader = tf.train.load_checkpoint(v2_dir)
    assert sorted(reader.get_variable_to_shape_map()) == [
        "global_step", "linear/linear_model/bias_weights", "linear/linear_model/x/weights",
        "training/Ftrl/beta", "training/Ftrl/decay", "training/Ftrl/l1_regularization_strength",
        "training/Ftrl/l2_regularization_strength", "training/Ftrl/learning_rate",
        "training/Ftrl/learning_rate_power",
        "training/Ftrl/linear/linear_model/bias_weights/accumulator",
        "training/Ftrl/linear/linear_model/bias_weights/linear",
        "training/Ftrl/linear/linear_model/x/weights/accumulator",
        "training/Ftrl/linear/linear_model/x/weights/linear",
    ]  # fmt: skip
    np.testing.assert_array_equal(
        reader.get_tensor("training/Ftrl/linear/linear_model/x/weights/linear"),
        old.get_variable_value("linear/linear_model/x/weights/part_0/Ftrl_1"),
    )
    assert reader.get_tensor("training/Ftrl/learning_rate") == pytest.approx(0.2)
    assert reader.get_tensor("training/Ftrl/learning_rate_power") == pytest.approx(-0.5)

    new = keras_estimator.LinearRegressor(columns(), model_dir=v2_dir, loss_reduction=SUM)
    np.testing.assert_allclose(predictions(new, "predictions"),
                               predictions(old, "predictions"), rtol=1e-6)  # fmt: skip
    old.train(train_input(Y_REG), steps=2)
    new.train(train_input(Y_REG), steps=2)
    for name, value in weights(old).items():
        np.testing.assert_allclose(new.get_variable_value(name), value, atol=1e-6, err_msg=name)


def test_tf_estimator_2_15_dnn_linear_combined_checkpoint_without_graph(tmp_path):
    """2.15's v1 DNNLinearCombinedClassifier (Adam dnn, Ftrl linear, 200 steps); no graph
    file is kept with the fixture, so the hyperparameters are Keras' defaults."""
    target = str(tmp_path / "v2" / "model.ckpt-200")
    cc.convert_checkpoint("combined", os.path.join(FIXTURE, "dnn_linear_combined_model"),
                          None, target)  # fmt: skip
    reader = tf.train.load_checkpoint(target)
    assert reader.get_tensor("training/Ftrl/iter") == 200  # the linear optimizer's own steps
    assert reader.get_tensor("training/Adam/beta_1") == pytest.approx(0.9, abs=1e-6)
    assert reader.get_tensor("training/Adam/beta_2") == pytest.approx(0.999, abs=1e-6)
    names = sorted(reader.get_variable_to_shape_map())
    assert not [n for n in names if n.endswith(("/Adam", "/Adam_1", "/Ftrl", "beta1_power"))]

    with open(os.path.join(FIXTURE, "dnn_linear_combined_expected.json")) as f:
        expected = json.load(f)
    x, _ = iris_like()
    est = keras_estimator.DNNLinearCombinedClassifier(
        model_dir=os.path.dirname(target), linear_feature_columns=iris_columns(),
        dnn_feature_columns=iris_columns(), dnn_hidden_units=[8], dnn_optimizer="Adam",
    )  # fmt: skip
    got = list(est.predict(lambda: tf.data.Dataset.from_tensor_slices(iris_features(x[:5]))
                           .batch(5)))  # fmt: skip
    assert_predictions_match(got, expected["predictions"], atol=1e-5)
    labels = (x[:, 0] > 5).astype(np.int64)
    est.train(lambda: tf.data.Dataset.from_tensor_slices((iris_features(x), labels)).batch(32),
              steps=1)  # fmt: skip
    assert sorted(est.get_variable_names()) == names


def test_no_optimizer_slot_is_sgd_and_two_sgds_in_combined_are_refused(tmp_path):
    source = str(tmp_path / "v1" / "model.ckpt-3")
    cc._write_checkpoint({"global_step": np.int64(3), "dnn/logits/kernel": np.ones([2, 1])},
                         source)  # fmt: skip
    target = str(tmp_path / "v2" / "model.ckpt-3")
    cc.convert_checkpoint("dnn", source, None, target)  # no .meta: Keras' SGD defaults
    reader = tf.train.load_checkpoint(target)
    assert sorted(reader.get_variable_to_shape_map()) == [
        "dnn/logits/kernel", "global_step", "training/SGD/decay", "training/SGD/learning_rate",
        "training/SGD/momentum",
    ]  # fmt: skip
    assert reader.get_tensor("training/SGD/learning_rate") == pytest.approx(0.01)
    with pytest.raises(ValueError, match="Both parts .* SGD"):
        cc.convert_checkpoint("combined", source, None, str(tmp_path / "v3" / "model.ckpt-3"))


def test_errors_say_what_was_expected(tmp_path):
    source = str(tmp_path / "v1" / "model.ckpt-1")
    cc._write_checkpoint({"global_step": np.int64(1), "w": np.ones([2]),
                          "w/part_1/Ftrl": np.ones([2])}, source)  # fmt: skip
    target = str(tmp_path / "out" / "model.ckpt-1")
    with pytest.raises(ValueError, match="Unknown estimator_type 'boosted'"):
        cc.convert_checkpoint("boosted", source, None, target)
    with pytest.raises(FileNotFoundError, match="No checkpoint at"):
        cc.convert_checkpoint("dnn", str(tmp_path / "nothing"), None, target)
    with pytest.raises(FileNotFoundError, match="No graph file"):
        cc.convert_checkpoint("dnn", source, str(tmp_path / "graph.pbtxt"), target)
    with pytest.raises(ValueError, match="partition 1"):
        cc.convert_checkpoint("linear", source, None, target)
    with pytest.raises(SystemExit):
        cc.main(["boosted", source, "g", target])


def test_the_mirror_modules_import_as_tf_estimator_2_15s(tmp_path):
    keras_estimator.install()
    try:
        from tensorflow_estimator.python.estimator.tools import analytics as mirrored
        from tensorflow_estimator.python.estimator.tools import checkpoint_converter
    finally:
        keras_estimator.uninstall()
    assert checkpoint_converter.convert_checkpoint is cc.convert_checkpoint
    assert mirrored.track_usage is analytics.track_usage
    assert analytics.track_usage("checkpoint_converter", ["dnn"]) is None
    assert analytics.track_numerical_issues((ValueError, ValueError("x"), None)) is None
