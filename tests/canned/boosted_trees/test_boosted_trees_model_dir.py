"""A BoostedTrees model_dir resumes where it stopped (to the same trees as one run), and
its SavedModel serves with plain TensorFlow."""

import numpy as np
import tensorflow as tf
from bt_data import columns, eval_input, features, predict_input, train_input

import keras_estimator as estimator

ENSEMBLE = ("node_feature", "node_threshold", "node_value", "node_gain")


def make(model_dir):
    return estimator.BoostedTreesRegressor(
        columns(), n_batches_per_layer=2, model_dir=str(model_dir), n_trees=4, max_depth=2,
        learning_rate=0.3, center_bias=True,
    )  # fmt: skip


def test_a_model_dir_resumes_to_the_trees_of_one_run(data, tmp_path):
    x, _, target = data["train"]
    # Every batch is the whole table: each train() call restarts input_fn, and the batches a
    # resumed run sees must be the ones the single run saw at the same steps.
    whole_table = train_input(x, target, batch=len(x))
    whole = make(tmp_path / "whole")
    whole.train(whole_table)
    resumed = make(tmp_path / "parts")
    resumed.train(whole_table, max_steps=1)  # inside the quantile batches
    resumed.train(whole_table, max_steps=9)  # inside a tree
    assert resumed.get_variable_value("boosted_trees/ensemble/num_finalized_trees") < 4
    make(tmp_path / "parts").train(whole_table)  # a new Estimator, same model_dir
    assert resumed.get_variable_value("global_step") == whole.get_variable_value("global_step")
    for name in ENSEMBLE:
        np.testing.assert_allclose(
            resumed.get_variable_value(f"boosted_trees/ensemble/{name}"),
            whole.get_variable_value(f"boosted_trees/ensemble/{name}"), rtol=1e-5, atol=1e-6,
        )  # fmt: skip
    x_test, _, target_test = data["test"]
    assert resumed.evaluate(eval_input(x_test, target_test)) == whole.evaluate(
        eval_input(x_test, target_test))  # fmt: skip


def test_exported_saved_model_serves_the_predictions(classifier, data, tmp_path):
    x, _, _ = data["test"]
    spec = tf.feature_column.make_parse_example_spec(columns())
    receiver = estimator.export.build_parsing_serving_input_receiver_fn(spec)
    path = classifier.export_saved_model(str(tmp_path), receiver)
    served = tf.saved_model.load(path)
    examples = [
        tf.train.Example(features=tf.train.Features(feature={
            key: tf.train.Feature(float_list=tf.train.FloatList(value=[value[i]]))
            for key, value in features(x).items()})).SerializeToString()
        for i in range(8)
    ]  # fmt: skip
    assert {"serving_default", "classification", "predict"} <= set(served.signatures)
    outputs = served.signatures["predict"](examples=tf.constant(examples))
    expected = np.array([p["probabilities"] for p in classifier.predict(predict_input(x[:8]))])
    np.testing.assert_allclose(outputs["probabilities"].numpy(), expected, rtol=1e-5)
    scores = served.signatures["serving_default"](inputs=tf.constant(examples))["scores"]
    np.testing.assert_allclose(scores.numpy(), expected, rtol=1e-5)
