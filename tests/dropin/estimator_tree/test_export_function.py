"""2.15's export/function: a model_fn as TF2 functions per mode (train, eval, predict)
that share their variables, checkpoint them, and wrap input receivers."""

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator
from keras_estimator import ModeKeys
from keras_estimator.dropin.estimator_tree.export import function as F

X = np.array([[1.0, 2.0]], np.float32)
Y = np.array([[1.0]], np.float32)


def model_fn(features, labels, mode, params):
    w = tf.compat.v1.get_variable("w", [2, 1], initializer=tf.compat.v1.ones_initializer())
    pred = tf.matmul(features["x"], w)
    if mode == ModeKeys.PREDICT:
        return keras_estimator.EstimatorSpec(mode, predictions={"y": pred})
    loss = tf.reduce_sum((pred - labels) ** 2)
    train_op = None
    if mode == ModeKeys.TRAIN:
        step = tf.compat.v1.train.get_or_create_global_step()
        train_op = tf.compat.v1.train.GradientDescentOptimizer(params["lr"]).minimize(loss, step)
    return keras_estimator.EstimatorSpec(mode, predictions={"y": pred}, loss=loss,
                                         train_op=train_op)  # fmt: skip


def test_modes_share_variables_train_steps_and_predictions_follow():
    mf = F.ModelFunction.from_function(model_fn, params={"lr": 0.1})
    assert mf.predict({"x": X})["predictions"]["y"].numpy().item() == 3.0
    out = mf.train({"x": X}, Y)
    assert sorted(out) == ["loss", "predictions", "train_op"] and out["train_op"] is None
    assert float(out["loss"]) == 4.0  # (3 - 1) ** 2, before the step
    # w -= 0.1 * 2 * (3 - 1) * x: [0.6, 0.2]; the prediction is now 1.
    np.testing.assert_allclose(mf.variables["w"].numpy(), [[0.6], [0.2]], rtol=1e-6)
    assert sorted(mf.variables) == ["global_step", "w"]
    assert int(mf.variables["global_step"].numpy()) == 1
    evaluated = mf.evaluate({"x": X}, Y)
    assert float(evaluated["loss"]) == pytest.approx(0.0, abs=1e-10)
    predicted = mf.call(ModeKeys.PREDICT, {"x": X})["predictions"]["y"]
    assert predicted.numpy().item() == pytest.approx(1.0)
    mf.train({"x": np.concatenate([X, X])}, np.concatenate([Y, Y]))  # a new shape: traced anew
    assert sorted(mf.variables) == ["global_step", "w"]  # and no new variable
    assert int(mf.variables["global_step"].numpy()) == 2


def test_model_function_checkpoints_and_saves_as_a_saved_model(tmp_path):
    mf = F.ModelFunction.from_function(model_fn, params={"lr": 0.1})
    mf.train({"x": X}, Y)
    path = tf.train.Checkpoint(model=mf).save(str(tmp_path / "ckpt"))
    restored = F.ModelFunction.from_function(model_fn, [ModeKeys.PREDICT], params={"lr": 0.1})
    restored.predict({"x": X})  # creates the variables
    tf.train.Checkpoint(model=restored).restore(path).assert_existing_objects_matched()
    assert restored.predict({"x": X})["predictions"]["y"].numpy().item() == pytest.approx(1.0)

    predict = restored._functions[ModeKeys.PREDICT]
    spec = {"x": tf.TensorSpec([None, 2], tf.float32)}
    serve = tf.function(lambda x: predict.get_concrete_function(spec)({"x": x})["predictions"])
    signature = serve.get_concrete_function(tf.TensorSpec([None, 2], tf.float32, name="x"))
    tf.saved_model.save(restored, str(tmp_path / "saved"), signatures=signature)
    loaded = tf.saved_model.load(str(tmp_path / "saved"))
    got = loaded.signatures["serving_default"](x=tf.constant(X))["y"]
    assert got.numpy().item() == pytest.approx(1.0)


def test_input_signature_traces_once_with_sparse_features_and_no_labels():
    def sparse_model_fn(features, mode):
        total = tf.sparse.reduce_sum(features["ids"], axis=1)
        return keras_estimator.EstimatorSpec(mode, predictions=total)

    signature = [{"ids": tf.SparseTensorSpec([None, 4], tf.int64)}]
    fn = F.EstimatorSpecFunction(sparse_model_fn, ModeKeys.PREDICT, input_signature=signature)
    assert fn.expects_labels is False
    one = {"ids": tf.sparse.from_dense(tf.constant([[1, 0, 2, 0]], tf.int64))}
    two = {"ids": tf.sparse.from_dense(tf.constant([[1, 0, 0, 0], [0, 5, 0, 5]], tf.int64))}
    assert fn(one)["predictions"].numpy().tolist() == [3]
    assert fn(two)["predictions"].numpy().tolist() == [1, 10]
    assert fn.get_concrete_function(one) is fn.get_concrete_function(two)
    assert fn.estimator_spec(one).mode == ModeKeys.PREDICT


def test_wrap_input_receiver_fn_gives_the_receiver_and_its_alternatives():
    def receiver_fn():
        examples = tf.compat.v1.placeholder(tf.string, [None], name="examples")
        features = tf.io.parse_example(examples, {"x": tf.io.FixedLenFeature([2], tf.float32)})
        return keras_estimator.export.ServingInputReceiver(
            features, {"examples": examples}, receiver_tensors_alternatives={"raw": features}
        )

    graph = F._EstimatorWrappedGraph()
    (default, default_name), (raw, raw_name) = graph.wrap_input_receiver_fn(receiver_fn)
    assert (default_name, raw_name) == (None, "raw")
    names = [tf.compat.as_str(fn.name) for fn in (default, raw)]
    assert "_input_receiver_raw" not in names[0] and "_input_receiver_raw" in names[1]
    example = tf.train.Example(features=tf.train.Features(feature={
        "x": tf.train.Feature(float_list=tf.train.FloatList(value=[1.0, 2.0]))
    })).SerializeToString()  # fmt: skip
    np.testing.assert_array_equal(default(examples=tf.constant([example]))["x"], X)
    np.testing.assert_array_equal(raw(x=tf.constant(X))["x"], X)
    assert int(graph.global_step) == 0


def test_helpers_and_errors_say_what_to_do():
    mf = F.ModelFunction.from_function(model_fn, [ModeKeys.PREDICT], params={"lr": 0.1})
    with pytest.raises(ValueError, match="multiple functions with name infer"):
        mf.add_mode(model_fn, ModeKeys.PREDICT)
    with pytest.raises(ValueError, match="Mode train is not defined"):
        mf.train({"x": X}, Y)
    with pytest.raises(TypeError, match="input_signature only"):
        F.EstimatorSpecFunction(model_fn, ModeKeys.PREDICT, params={}, autograph=False)
    with pytest.raises(ValueError, match="wrap_model_fn"):
        F._EstimatorWrappedGraph().estimator_spec  # noqa: B018
    fn, expects_labels = F._wrap_and_verify_model_fn(model_fn, ModeKeys.PREDICT, params={},
                                                     input_signature=[{}])  # fmt: skip
    assert expects_labels is True and fn.__code__.co_varnames[:1] == ("features",)
    tensor = tf.constant([1.0])
    assert F._canonicalize_receiver_tensors(tensor) == {"input": tensor}
    with pytest.raises(ValueError, match="composite tensors"):
        F._canonicalize_receiver_tensors({"s": tf.sparse.from_dense(tf.constant([[1]]))})
    assert F._input_receiver_fn_name(None) == "_input_receiver"
    assert F._input_receiver_fn_name("raw") == "_input_receiver_raw"
    spec = keras_estimator.EstimatorSpec(ModeKeys.PREDICT, predictions={"y": tensor})
    assert F._filter_estimator_spec_outputs(spec) == {"predictions": {"y": tensor}}


def test_the_mirror_module_imports_as_tf_estimator_2_15s():
    keras_estimator.install()
    try:
        from tensorflow_estimator.python.estimator.export import function
    finally:
        keras_estimator.uninstall()
    assert function.ModelFunction is F.ModelFunction
