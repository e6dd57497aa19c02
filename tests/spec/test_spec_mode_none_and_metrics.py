"""EstimatorSpec(mode=None), nested metric values and Keras metric checks (tf.estimator 2.15)."""

import keras
import pytest
import tensorflow as tf

import keras_estimator as estimator
from keras_estimator import EstimatorSpec, ModeKeys
from keras_estimator.engine.metrics import value_after
from keras_estimator.spec.estimator_spec import spec_for_mode


def _in_graph(fn):
    with tf.Graph().as_default():
        return fn()


def test_mode_none_requires_nothing_and_spec_for_mode_checks_the_run_mode():
    def build():
        empty = EstimatorSpec(mode=None)
        assert empty.mode is None and empty.loss is None and empty.predictions == {}
        with pytest.raises(ValueError, match="Missing loss"):
            spec_for_mode(empty, ModeKeys.EVAL)
        with pytest.raises(ValueError, match="Missing predictions"):
            spec_for_mode(empty, ModeKeys.PREDICT)
        loss = tf.constant(1.0)
        spec = EstimatorSpec(None, loss=loss, predictions={"p": loss})
        evaluated = spec_for_mode(spec, ModeKeys.EVAL)
        assert evaluated.mode == ModeKeys.EVAL and evaluated.loss is spec.loss
        assert spec_for_mode(evaluated, ModeKeys.TRAIN) is evaluated  # a set mode stays
        with pytest.raises(ValueError, match="mode must be one of"):
            EstimatorSpec(mode="training")

    _in_graph(build)


def test_an_estimator_trains_a_model_fn_that_returns_mode_none(tmp_path):
    calls = []

    def model_fn(features):
        calls.append(sorted(features))
        step = tf.compat.v1.train.get_global_step()
        return EstimatorSpec(
            mode=None,
            loss=tf.reduce_sum(tf.cast(features["a"], tf.float32)),
            train_op=tf.compat.v1.assign_add(step, 1),
        )

    est = estimator.Estimator(model_fn, model_dir=str(tmp_path))
    est.train(lambda: {"a": tf.constant([1, 2])}, steps=3)
    assert calls == [["a"]] and est.get_variable_value("global_step") == 3


def test_nested_metric_values_are_accepted_and_leaves_checked():
    def build():
        loss = tf.constant(1.0)
        nested = ((loss, {"n": tf.constant(2)}), tf.constant(3.0, tf.float64))
        spec = EstimatorSpec(ModeKeys.EVAL, loss=loss, eval_metric_ops={"m": (nested, tf.no_op())})
        assert spec.eval_metric_ops["m"][0] is nested
        with pytest.raises(TypeError, match="must be \\(metric_value, update_op\\) tuples of"):
            EstimatorSpec(ModeKeys.EVAL, loss=loss, eval_metric_ops={"m": ((loss, 2.0), loss)})

    _in_graph(build)


def test_value_after_reads_every_leaf_after_the_updates():
    total = tf.Variable(0.0)

    @tf.function(autograph=False)
    def step():
        read = total.read_value()
        update = total.assign_add(5.0)
        return value_after({"pair": (read, read * 2.0), "one": tf.constant(1)}, [update.op])

    values = step()
    assert float(values["pair"][0]) == 5.0 and float(values["pair"][1]) == 10.0
    assert int(values["one"]) == 1


def test_keras_metrics_need_updates_from_the_default_graph():
    with tf.Graph().as_default():
        idle = keras.metrics.Mean(name="idle")
        stale = keras.metrics.Mean(name="stale")
        stale.update_state(1.0)
    with tf.Graph().as_default():
        loss = tf.constant(1.0)
        with pytest.raises(ValueError, match='Please call update_state\\(...\\) on the "idle"'):
            EstimatorSpec(ModeKeys.EVAL, loss=loss, eval_metric_ops={"i": idle})
        with pytest.raises(ValueError, match="must be from the default graph") as info:
            EstimatorSpec(ModeKeys.EVAL, loss=loss, eval_metric_ops={"s": stale})
        assert "Received:" in str(info.value)
        fresh = keras.metrics.Mean()
        fresh.update_state(loss)
        EstimatorSpec(ModeKeys.EVAL, loss=loss, eval_metric_ops={"f": fresh})


def test_a_keras_metric_updated_in_a_tf_function_passes():
    metric = keras.metrics.Mean()  # eager variables, captured by the function's graph

    @tf.function(autograph=False)
    def model_step(x):
        metric.update_state(x)
        spec = EstimatorSpec(ModeKeys.EVAL, loss=tf.reduce_mean(x), eval_metric_ops={"m": metric})
        return spec.loss

    model_step(tf.constant([1.0, 3.0]))

    @tf.function(autograph=False)
    def without_update(x):
        EstimatorSpec(ModeKeys.EVAL, loss=tf.reduce_mean(x), eval_metric_ops={"m": metric})
        return x

    with pytest.raises(ValueError, match="Please call update_state"):
        without_update(tf.constant([1.0]))


def test_a_loss_of_unknown_size_trains_and_evaluates_as_in_tf_estimator(tmp_path):
    """2.15 accepted a loss whose size is unknown statically ([None, 1] from a batch):
    evaluation averages its elements; training reports its mean."""

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(([[1.0], [2.0]], [[10.0], [20.0]])).batch(1)

    def model_fn(features, labels, mode):
        step = tf.compat.v1.train.get_global_step()
        return estimator.EstimatorSpec(
            mode,
            predictions=features,
            loss=features + (0 if labels is None else labels),  # 11, 22
            train_op=tf.compat.v1.assign_add(step, 1),
        )

    est = estimator.Estimator(model_fn, model_dir=str(tmp_path))
    est.train(input_fn)
    assert est.get_variable_value("global_step") == 2
    assert est.evaluate(input_fn)["loss"] == 16.5
    assert [float(p[0]) for p in est.predict(input_fn)] == [1.0, 2.0]
