"""TF1 programs call the Estimator inside a graph (`with tf.Graph().as_default():`, or with
graph mode on); tf.estimator built its own graph there. keras_estimator runs eagerly
inside its methods and leaves the caller's mode as it was."""

import tensorflow as tf
from helpers import classifier_model_fn, dataset_input_fn, make_estimator

import keras_estimator as estimator


def test_train_evaluate_predict_export_inside_a_tf1_graph(tmp_path, toy_data):
    x, y = toy_data
    est = make_estimator(tmp_path / "model", classifier_model_fn)
    with tf.Graph().as_default() as graph:
        assert not tf.executing_eagerly()
        est.train(dataset_input_fn(x, y, batch_size=32, repeat=True), steps=5)
        metrics = est.evaluate(dataset_input_fn(x, y, batch_size=64))
        predictions = est.predict(dataset_input_fn(x[:10], batch_size=4))
        first = next(predictions)
        assert not tf.executing_eagerly()  # suspended between examples: the caller's mode
        rest = list(predictions)
        receiver = estimator.export.build_raw_serving_input_receiver_fn(
            {"x": tf.TensorSpec([None, 8], tf.float32)}
        )
        export_dir = est.export_saved_model(str(tmp_path / "export"), receiver)
        assert tf.compat.v1.get_default_graph() is graph
    assert metrics["global_step"] == 5 and 0.0 <= metrics["accuracy"] <= 1.0
    assert len([first, *rest]) == 10
    assert tf.io.gfile.exists(tf.io.gfile.join(export_dir.decode(), "saved_model.pb"))
