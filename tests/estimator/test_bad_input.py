"""Bad model_fns, specs and model_dirs: a clear error, and model_dir left usable.

Covered here (input_fn returns are in test_inputs.py, spec fields in test_spec_and_config.py,
mismatched checkpoints in test_checkpoints.py):
  model_fn missing / not callable / without `features` / with unknown args / params unused
  model_fn returning a dict, None, a tuple
  TRAIN spec without loss, without train_op; non-scalar loss
  PREDICT spec without predictions; scalar predictions split into examples
  eval_metric_ops not a dict, with malformed values
  model_dir that is a file
"""

import os

import numpy as np
import pytest
import tensorflow.compat.v1 as tf
from helpers import dataset_input_fn

import keras_estimator as estimator

X = np.ones((16, 2), np.float32)
Y = np.zeros((16,), np.int64)


def train_fn():
    return dataset_input_fn(X, Y, 4, repeat=True)()


def eval_fn():
    return dataset_input_fn(X, Y, 4)()


def _weights(features):
    w = tf.get_variable("w", [2, 1], initializer=tf.ones_initializer())
    return tf.matmul(features["x"], w)


@pytest.mark.parametrize(
    "model_fn, params, message",
    [
        (None, None, "model_fn must be provided to Estimator."),
        (lambda labels, mode: None, None, "must include features argument"),
        (
            lambda features, labels, mode, batch_size: None,
            None,
            r"not expected args: \['batch_size'\]",
        ),
        (lambda features, labels, mode: None, {"lr": 1}, "does not include params argument"),
    ],
)
def test_bad_model_fn_signatures(tmp_path, model_fn, params, message):
    with pytest.raises(ValueError, match=message):
        estimator.Estimator(model_fn, model_dir=str(tmp_path), params=params)


@pytest.mark.parametrize(
    "returned",
    [
        pytest.param(lambda out: {"loss": tf.reduce_mean(out)}, id="dict"),
        pytest.param(lambda out: None, id="none"),
        pytest.param(lambda out: (tf.reduce_mean(out), tf.no_op()), id="tuple"),
    ],
)
def test_model_fn_must_return_an_estimator_spec(tmp_path, returned):
    def model_fn(features, labels, mode):
        return returned(_weights(features))

    est = estimator.Estimator(model_fn, model_dir=str(tmp_path))
    with pytest.raises(ValueError, match="model_fn should return an EstimatorSpec"):
        est.train(train_fn, steps=1)
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize(
    "make_spec, error, message",
    [
        pytest.param(
            lambda mode, out: estimator.EstimatorSpec(mode, train_op=tf.no_op()),
            ValueError,
            "Missing loss.",
            id="train_without_loss",
        ),
        pytest.param(
            lambda mode, out: estimator.EstimatorSpec(mode, loss=tf.reduce_mean(out)),
            ValueError,
            "Missing train_op.",
            id="train_without_train_op",
        ),
        pytest.param(
            # A loss of statically known size > 1 (one of unknown size, [None, 1] from a
            # batch, is accepted as tf.estimator 2.15 accepted it).
            lambda mode, out: estimator.EstimatorSpec(
                mode,
                loss=tf.ones([3]) * tf.reduce_mean(out),
                train_op=tf.train.GradientDescentOptimizer(0.1).minimize(tf.reduce_mean(out)),
            ),
            ValueError,
            "Loss must be scalar",
            id="non_scalar_loss",
        ),
    ],
)
def test_bad_train_specs_raise_and_leave_model_dir_clean(tmp_path, make_spec, error, message):
    def model_fn(features, labels, mode):
        return make_spec(mode, _weights(features))

    est = estimator.Estimator(model_fn, model_dir=str(tmp_path))
    with pytest.raises(error, match=message):
        est.train(train_fn, steps=1)
    assert os.listdir(tmp_path) == []


def test_predict_spec_without_predictions(tmp_path):
    def model_fn(features, labels, mode):
        out = _weights(features)
        return estimator.EstimatorSpec(mode, loss=tf.reduce_mean(out))

    est = estimator.Estimator(model_fn, model_dir=str(tmp_path))
    with pytest.raises(ValueError, match="Missing predictions."):
        next(est.predict(lambda: tf.data.Dataset.from_tensor_slices({"x": X}).batch(4)))


def test_scalar_predictions_cannot_be_split_into_examples(tmp_path):
    def model_fn(features, labels, mode):
        return estimator.EstimatorSpec(
            mode, predictions={"total": tf.reduce_sum(_weights(features))}
        )

    est = estimator.Estimator(model_fn, model_dir=str(tmp_path))
    predict_fn = lambda: tf.data.Dataset.from_tensor_slices({"x": X}).batch(4)  # noqa: E731
    with pytest.raises(ValueError, match="'total' is a scalar"):
        next(est.predict(predict_fn))
    assert next(est.predict(predict_fn, yield_single_examples=False))["total"] == 8.0


@pytest.mark.parametrize(
    "metric_ops, error, message",
    [
        pytest.param(
            lambda out: [tf.metrics.mean(out)],
            TypeError,
            "eval_metric_ops must be a dict",
            id="list",
        ),
        pytest.param(
            lambda out: {"m": tf.reduce_mean(out)},
            TypeError,
            "must be \\(metric_value, update_op\\) tuples",
            id="tensor",
        ),
        pytest.param(
            lambda out: {"m": (1.0, 2.0)},
            TypeError,
            "must be \\(metric_value, update_op\\) tuples",
            id="floats",
        ),
        pytest.param(
            lambda out: {"m": tf.metrics.mean(out) + (1,)},
            TypeError,
            "must be \\(metric_value, update_op\\) tuples",
            id="triple",
        ),
    ],
)
def test_malformed_eval_metric_ops(tmp_path, metric_ops, error, message):
    def model_fn(features, labels, mode):
        out = _weights(features)
        return estimator.EstimatorSpec(
            mode, loss=tf.reduce_mean(out), eval_metric_ops=metric_ops(out)
        )

    est = estimator.Estimator(model_fn, model_dir=str(tmp_path))
    with pytest.raises(error, match=message):
        est.evaluate(eval_fn)
    assert os.listdir(tmp_path) == []


def test_model_dir_that_is_a_file(tmp_path):
    path = tmp_path / "not_a_dir"
    path.write_text("hello")
    with pytest.raises(ValueError, match="exists and is a file; expected a directory"):
        estimator.Estimator(lambda features, labels, mode: None, model_dir=str(path))
    assert path.read_text() == "hello"


def test_a_failing_train_keeps_the_previous_checkpoint_resumable(tmp_path):
    """A model_fn that breaks on a later call does not damage what is in model_dir."""
    broken = {"on": False}

    def model_fn(features, labels, mode):
        out = _weights(features)
        if broken["on"]:
            raise RuntimeError("model_fn bug")
        loss = tf.reduce_mean(out)
        train_op = tf.train.GradientDescentOptimizer(0.01).minimize(
            loss, tf.train.get_global_step()
        )
        return estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

    estimator.Estimator(model_fn, model_dir=str(tmp_path)).train(train_fn, steps=3)
    before = sorted(os.listdir(tmp_path))
    broken["on"] = True
    with pytest.raises(RuntimeError, match="model_fn bug"):
        estimator.Estimator(model_fn, model_dir=str(tmp_path)).train(train_fn, steps=3)
    assert sorted(os.listdir(tmp_path)) == before
    broken["on"] = False
    est = estimator.Estimator(model_fn, model_dir=str(tmp_path))
    est.train(train_fn, steps=2)
    assert est.get_variable_value("global_step") == 5


def test_evaluate_on_endless_input_without_steps_says_so(tmp_path, toy_data):
    from helpers import make_estimator

    x, y = toy_data
    est = make_estimator(tmp_path)
    est.train(dataset_input_fn(x, y), steps=2)
    endless = dataset_input_fn(x, y, repeat=True)
    with pytest.raises(ValueError, match=r"endless input .* Fix: remove `.repeat\(\)`"):
        est.evaluate(endless)
    numpy_endless = estimator.inputs.numpy_input_fn({"x": x}, y, num_epochs=None, shuffle=False)
    with pytest.raises(ValueError, match="steps=None, input cardinality=infinite"):
        est.evaluate(numpy_endless)
    assert est.evaluate(endless, steps=3)["global_step"] == 2  # with steps it is fine
