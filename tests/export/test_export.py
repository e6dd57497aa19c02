"""export_saved_model: receivers, export outputs, signatures, and serving without us."""

import json
import os
import sysconfig

import numpy as np
import pytest
import tensorflow as tf2
import tensorflow.compat.v1 as tf
from helpers import dataset_input_fn, make_estimator, run_process, run_python

import keras_estimator as estimator
from keras_estimator import export

SERVE_WITHOUT_US = """
import json, sys
sys.modules["keras_estimator"] = None  # importing it would fail: serving must not need it
import numpy as np
import tensorflow as tf
path, key, inputs = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
fn = tf.saved_model.load(path).signatures[key]
args = {
    k: tf.constant([bytes.fromhex(b) for b in v["value"]] if v["dtype"] == "bytes"
                   else np.array(v["value"], dtype=v["dtype"]))
    for k, v in inputs.items()
}
outputs = {k: v.numpy() for k, v in fn(**args).items()}
print(json.dumps({k: v.tolist() for k, v in outputs.items() if v.dtype != object}))
"""


def serve_in_fresh_process(path, key, inputs):
    payload = {
        k: {"value": [b.hex() for b in v], "dtype": "bytes"}
        if v.dtype == object
        else {"value": v.tolist(), "dtype": str(v.dtype)}
        for k, v in inputs.items()
    }
    result = run_python("-c", SERVE_WITHOUT_US, path, key, json.dumps(payload))
    assert result.returncode == 0, result.stderr[-3000:]
    return {k: np.array(v) for k, v in json.loads(result.stdout.splitlines()[-1]).items()}


@pytest.fixture
def trained(tmp_path, toy_data):
    x, y = toy_data
    est = make_estimator(tmp_path / "model")
    est.train(dataset_input_fn(x, y, 32, repeat=True), steps=30)
    return est


def test_raw_receiver_export_serves_predict_values_in_a_fresh_process(tmp_path, trained, toy_data):
    x, _ = toy_data
    fn = export.build_raw_serving_input_receiver_fn({"x": tf.TensorSpec([None, 8], tf.float32)})
    path = trained.export_saved_model(str(tmp_path / "exports"), fn)
    assert isinstance(path, bytes)
    path = path.decode()
    assert os.path.dirname(path) == str(tmp_path / "exports")
    assert os.path.basename(path).isdigit()  # <export_dir_base>/<unix timestamp>
    assert os.listdir(tmp_path / "exports") == [os.path.basename(path)]  # no temp dir left
    served = serve_in_fresh_process(path, "serving_default", {"x": x[:5]})
    predicted = list(trained.predict(dataset_input_fn(x[:5], batch_size=5)))
    np.testing.assert_allclose(
        served["probabilities"], [p["probabilities"] for p in predicted], rtol=1e-5
    )
    np.testing.assert_array_equal(served["classes"], [p["classes"] for p in predicted])


def heads_model_fn(features, labels, mode, params):
    """A classification + regression + predict head, as canned estimators exported them."""
    x = features["x"] if isinstance(features, dict) else features
    logits = tf.layers.dense(x, 3)
    probabilities = tf.nn.softmax(logits)
    class_ids = tf.argmax(logits, 1)
    if mode == estimator.ModeKeys.PREDICT:
        outputs = {
            "serving_default": export.ClassificationOutput(
                scores=probabilities, classes=tf.as_string(tf.range(3))[None, :]
            ),
            "regression": export.RegressionOutput(tf.reduce_max(probabilities, 1)),
            "predict": export.PredictOutput({"class_ids": class_ids, "probs": probabilities}),
        }
        return estimator.EstimatorSpec(
            mode, predictions={"class_ids": class_ids}, export_outputs=outputs
        )
    loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, tf.train.get_global_step())
    return estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def serialized_examples(x):
    return np.array(
        [
            tf.train.Example(
                features=tf.train.Features(
                    feature={"x": tf.train.Feature(float_list=tf.train.FloatList(value=row))}
                )
            ).SerializeToString()
            for row in x
        ],
        dtype=object,
    )


def test_parsing_receiver_gives_classify_regress_and_predict_signatures(tmp_path, toy_data):
    x, y = toy_data
    est = make_estimator(tmp_path / "m", heads_model_fn)
    est.train(dataset_input_fn(x, y, 32, repeat=True), steps=10)
    fn = export.build_parsing_serving_input_receiver_fn(
        {"x": tf.io.FixedLenFeature([8], tf.float32)}
    )
    path = est.export_saved_model(str(tmp_path / "e"), fn).decode()
    signatures = tf2.saved_model.load(path).signatures
    assert set(signatures) == {"serving_default", "regression", "predict"}
    examples = serialized_examples(x[:4])
    classified = serve_in_fresh_process(path, "serving_default", {"inputs": examples})
    assert classified["scores"].shape == (4, 3)
    predicted = serve_in_fresh_process(path, "predict", {"examples": examples})
    np.testing.assert_allclose(predicted["probs"], classified["scores"], rtol=1e-6)
    expected = [p["class_ids"] for p in est.predict(dataset_input_fn(x[:4], batch_size=4))]
    np.testing.assert_array_equal(predicted["class_ids"], expected)

    # The command TensorFlow installs beside this interpreter: an unactivated venv has no
    # `saved_model_cli` on PATH.
    saved_model_cli = os.path.join(sysconfig.get_path("scripts"), "saved_model_cli")
    listing = run_process([saved_model_cli, "show", "--all", "--dir", path])
    assert listing.returncode == 0, listing.stderr[-2000:]
    shown = listing.stdout
    for name in ("serving_default", "regression", "predict"):
        assert f"signature_def['{name}']" in shown
    assert "Method name is: tensorflow/serving/classify" in shown
    assert "Method name is: tensorflow/serving/regress" in shown
    assert "Method name is: tensorflow/serving/predict" in shown


def test_classification_over_a_raw_receiver_keeps_only_predict_signatures(tmp_path, toy_data):
    x, y = toy_data
    est = make_estimator(tmp_path / "m", heads_model_fn)
    est.train(dataset_input_fn(x, y, 32, repeat=True), steps=2)
    fn = export.build_raw_serving_input_receiver_fn({"x": tf.TensorSpec([None, 8], tf.float32)})
    path = est.export_saved_model(str(tmp_path / "e"), fn).decode()
    assert set(tf2.saved_model.load(path).signatures) == {"predict"}


def test_single_tensor_features_alternatives_and_graph_placeholders(tmp_path, toy_data):
    x, y = toy_data
    est = make_estimator(tmp_path / "m", heads_model_fn)
    est.train(dataset_input_fn(x, y, 32, repeat=True), steps=2)
    with tf.Graph().as_default():  # how TF1 code made its feature placeholders
        placeholder = tf.placeholder(tf.float32, [None, 8], name="raw_x")
    raw = export.build_raw_serving_input_receiver_fn({"x": placeholder})

    def receiver_fn():
        serialized = tf.placeholder(tf.string, [None], name="examples")
        parsed = tf.io.parse_example(serialized, {"x": tf.io.FixedLenFeature([8], tf.float32)})
        return export.TensorServingInputReceiver(
            parsed["x"], {"examples": serialized}, receiver_tensors_alternatives={"raw": parsed}
        )

    path = est.export_saved_model(str(tmp_path / "e"), receiver_fn).decode()
    signatures = tf2.saved_model.load(path).signatures
    assert {"serving_default", "predict", "raw:predict"} <= set(signatures)
    by_examples = signatures["predict"](examples=tf.constant(serialized_examples(x[:3])))
    by_tensor = signatures["raw:predict"](x=tf.constant(x[:3]))
    np.testing.assert_allclose(by_examples["probs"], by_tensor["probs"], rtol=1e-6)
    path2 = est.export_saved_model(str(tmp_path / "e"), raw).decode()
    assert path2 != path  # a second export in the same second gets its own directory
    got = tf2.saved_model.load(path2).signatures["predict"](x=tf.constant(x[:3]))
    np.testing.assert_allclose(got["probs"], by_tensor["probs"], rtol=1e-6)


def test_checkpoint_path_as_text_and_assets_extra(tmp_path, trained, toy_data):
    x, y = toy_data
    first = trained.latest_checkpoint()
    trained.train(dataset_input_fn(x, y, 32, repeat=True), steps=30)
    fn = export.build_raw_serving_input_receiver_fn({"x": tf.TensorSpec([None, 8], tf.float32)})
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("a\nb\n")
    old = trained.export_saved_model(
        str(tmp_path / "e"),
        fn,
        checkpoint_path=first,
        as_text=True,
        assets_extra={"data/vocab.txt": str(vocab)},
    ).decode()
    new = trained.export_saved_model(str(tmp_path / "e"), fn).decode()
    assert os.path.exists(os.path.join(old, "saved_model.pbtxt"))
    assert not os.path.exists(os.path.join(old, "saved_model.pb"))
    assert (open(os.path.join(old, "assets.extra", "data", "vocab.txt")).read()) == "a\nb\n"
    kernel = lambda path: [  # noqa: E731
        v.numpy() for v in tf2.saved_model.load(path).variables_used if v.name == "dense/kernel:0"
    ][0]
    np.testing.assert_array_equal(kernel(old), tf.train.load_variable(first, "dense/kernel"))
    np.testing.assert_array_equal(kernel(new), trained.get_variable_value("dense/kernel"))
    assert not np.array_equal(kernel(old), kernel(new))


def test_export_outputs_rules():
    t = tf.constant([[1.0]])
    spec = estimator.EstimatorSpec("infer", predictions={"y": t})
    assert list(spec.export_outputs) == ["serving_default"]  # default from predictions
    assert isinstance(spec.export_outputs["serving_default"], export.PredictOutput)
    single = estimator.EstimatorSpec(
        "infer", predictions={"y": t}, export_outputs={"head": export.RegressionOutput(t[:, 0])}
    )
    assert set(single.export_outputs) == {"head", "serving_default"}  # aliased
    with pytest.raises(ValueError, match="none of them is specified as the default"):
        estimator.EstimatorSpec(
            "infer",
            predictions={"y": t},
            export_outputs={"a": export.PredictOutput(t), "b": export.PredictOutput(t)},
        )
    with pytest.raises(TypeError, match="Values in export_outputs must be ExportOutput"):
        estimator.EstimatorSpec("infer", predictions={"y": t}, export_outputs={"a": t})
    with pytest.raises(ValueError, match="Classification classes must be a string Tensor"):
        export.ClassificationOutput(classes=tf.constant([1]))
    with pytest.raises(ValueError, match="At least one of `scores` and `classes`"):
        export.ClassificationOutput()
    with pytest.raises(ValueError, match="Regression output value must be a float32 Tensor"):
        export.RegressionOutput(tf.constant([1]))


def test_export_errors_leave_nothing_behind(tmp_path, toy_data):
    x, y = toy_data
    est = make_estimator(tmp_path / "m")
    fn = export.build_raw_serving_input_receiver_fn({"x": tf.TensorSpec([None, 8], tf.float32)})
    with pytest.raises(ValueError, match="Couldn't find trained model at"):
        est.export_saved_model(str(tmp_path / "e"), fn)
    est.train(dataset_input_fn(x, y, 32, repeat=True), steps=1)
    with pytest.raises(TypeError, match="must return a ServingInputReceiver"):
        est.export_saved_model(str(tmp_path / "e"), lambda: {"x": 1})
    with pytest.raises(ValueError, match="receiver_tensor x must be a Tensor"):
        export.ServingInputReceiver({"x": tf.constant([1.0])}, {"x": 3})
    with pytest.raises(
        tf.errors.NotFoundError, match=r"dense/kernel: checkpoint has float32\[8, 16\]"
    ):
        wrong = export.build_raw_serving_input_receiver_fn(
            {"x": tf.TensorSpec([None, 5], tf.float32)}
        )
        est.export_saved_model(str(tmp_path / "e"), wrong)
    assert not (tmp_path / "e").exists() or os.listdir(tmp_path / "e") == []
    with pytest.raises(NotImplementedError, match="experimental_mode='train'"):
        est.export_saved_model(str(tmp_path / "e"), fn, experimental_mode="train")


def test_tf2_style_model_fn_with_batch_norm_exports_its_trained_state(tmp_path, toy_data):
    import keras

    def keras_model_fn(features, labels, mode):
        hidden = keras.layers.Dense(8, activation="relu")(features["x"])
        hidden = keras.layers.BatchNormalization()(hidden, training=mode == "train")
        logits = keras.layers.Dense(3)(hidden)
        if mode == estimator.ModeKeys.PREDICT:
            return estimator.EstimatorSpec(mode, predictions={"p": tf.nn.softmax(logits)})
        loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
        return estimator.EstimatorSpec(mode, loss=loss, train_op=keras.optimizers.Adam(0.01))

    x, y = toy_data
    est = estimator.Estimator(keras_model_fn, model_dir=str(tmp_path / "m"))
    est.train(dataset_input_fn(x, y, 16, repeat=True), steps=20)
    assert est.get_variable_value("batch_normalization/moving_mean").any()  # trained state
    fn = export.build_raw_serving_input_receiver_fn({"x": tf.TensorSpec([None, 8], tf.float32)})
    path = est.export_saved_model(str(tmp_path / "e"), fn).decode()
    served = serve_in_fresh_process(path, "serving_default", {"x": x[:4]})["p"]
    predicted = [p["p"] for p in est.predict(dataset_input_fn(x[:4], batch_size=4))]
    np.testing.assert_allclose(served, predicted, rtol=1e-5)
