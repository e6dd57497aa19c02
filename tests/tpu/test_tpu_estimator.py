"""TPUEstimator with use_tpu=False: params per mode, TPUEstimatorSpec, configs, export."""

import glob

import numpy as np
import pytest
import tensorflow as tf2
import tensorflow.compat.v1 as tf
from helpers import run_python

import keras_estimator as estimator
from keras_estimator import tpu


def make_input_fn(x, y, seen, repeat=False):
    def input_fn(params):
        seen.append(("input_fn", params["batch_size"]))
        ds = tf.data.Dataset.from_tensor_slices(({"x": x}, y))
        ds = ds.repeat() if repeat else ds
        return ds.batch(params["batch_size"], drop_remainder=True)

    return input_fn


def make_model_fn(seen, model_dir=None, metrics_as_dict=False):
    def model_fn(features, labels, mode, params):
        seen.append(("model_fn", mode, params.get("batch_size"), params["use_tpu"]))
        logits = tf.layers.dense(features["x"], 3)
        if mode == estimator.ModeKeys.PREDICT:
            return tpu.TPUEstimatorSpec(mode, predictions={"probabilities": tf.nn.softmax(logits)})
        loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)

        def metric_fn(labels, logits):
            return {"accuracy": tf.metrics.accuracy(labels, tf.argmax(logits, 1))}

        tensors = {"labels": labels, "logits": logits} if metrics_as_dict else [labels, logits]
        global_step = tf.train.get_global_step()

        def host_call_fn(gs, loss):
            writer = tf2.summary.create_file_writer(f"{model_dir}/host_call_{mode}")
            with writer.as_default(), tf2.summary.record_if(True):
                tf2.summary.scalar("host_loss", loss[0], step=gs[0])
            return tf.summary.all_v2_summary_ops()

        if mode == estimator.ModeKeys.EVAL:
            eval_host_call = None
            if model_dir:
                eval_host_call = (
                    host_call_fn,
                    [tf.reshape(global_step, [1]), tf.reshape(loss, [1])],
                )
            return tpu.TPUEstimatorSpec(
                mode, loss=loss, eval_metrics=(metric_fn, tensors), host_call=eval_host_call
            )
        train_op = tf.train.GradientDescentOptimizer(0.5).minimize(loss, global_step)

        def scaffold_fn():
            seen.append(("scaffold_fn", mode))
            return tf.train.Scaffold()

        host_call = None
        if model_dir:
            host_call = (host_call_fn, [tf.reshape(global_step, [1]), tf.reshape(loss, [1])])
        return tpu.TPUEstimatorSpec(
            mode, loss=loss, train_op=train_op, host_call=host_call, scaffold_fn=scaffold_fn
        )

    return model_fn


def make_tpu_estimator(tmp_path, seen, **kwargs):
    # Seeded: the tests below compare losses and accuracy after 5 and 30 steps of a linear
    # model; unseeded, 1 run in ~80 had a last-step loss above the first step's.
    config = tpu.RunConfig(
        model_dir=str(tmp_path / "m"),
        tf_random_seed=1,
        tpu_config=tpu.TPUConfig(iterations_per_loop=10),
    )
    return tpu.TPUEstimator(
        make_model_fn(seen, **kwargs),
        config=config,
        use_tpu=False,
        train_batch_size=16,
        eval_batch_size=8,
        predict_batch_size=4,
    )


def test_batch_size_per_mode_eval_metrics_scaffold_fn_and_predict(tmp_path, toy_data):
    x, y = toy_data
    seen = []
    est = make_tpu_estimator(tmp_path, seen)
    est.train(make_input_fn(x, y, seen, repeat=True), max_steps=30)
    assert ("input_fn", 16) in seen and ("model_fn", "train", 16, False) in seen
    assert ("scaffold_fn", "train") in seen
    result = est.evaluate(make_input_fn(x, y, seen))
    assert ("input_fn", 8) in seen and ("model_fn", "eval", 8, False) in seen
    assert result["global_step"] == 30 and result["accuracy"] > 0.6
    probabilities = [p["probabilities"] for p in est.predict(make_input_fn(x[:12], y[:12], seen))]
    assert ("input_fn", 4) in seen and ("model_fn", "infer", 4, False) in seen
    assert len(probabilities) == 12
    np.testing.assert_allclose(np.sum(probabilities, axis=1), 1.0, rtol=1e-5)
    # Exporting calls the model_fn without a batch size, as TPUEstimator did.
    fn = estimator.export.build_raw_serving_input_receiver_fn(
        {"x": tf2.TensorSpec([None, 8], tf.float32)}
    )
    path = est.export_saved_model(str(tmp_path / "export"), fn).decode()
    assert ("model_fn", "infer", None, False) in seen
    served = tf2.saved_model.load(path).signatures["serving_default"](x=tf2.constant(x[:4]))
    np.testing.assert_allclose(served["probabilities"], probabilities[:4], rtol=1e-5)


def test_eval_metrics_as_dict_and_host_call_writes_every_step(tmp_path, toy_data):
    x, y = toy_data
    seen = []
    est = make_tpu_estimator(tmp_path, seen, model_dir=str(tmp_path / "m"), metrics_as_dict=True)
    est.train(make_input_fn(x, y, seen, repeat=True), steps=5)
    result = est.evaluate(make_input_fn(x, y, seen))

    def host_losses(mode):
        """(step, loss) of every host_loss the host_call wrote in `mode`, by step."""
        return sorted(
            (event.step, float(tf.make_ndarray(value.tensor)))
            for path in glob.glob(str(tmp_path / "m" / f"host_call_{mode}" / "events.*"))
            for event in tf.train.summary_iterator(path)
            for value in event.summary.value
            if value.tag == "host_loss"
        )

    def host_steps(mode):
        return [step for step, _ in host_losses(mode)]

    # Every step; the global step is read after minimize() in program order: 1..5.
    assert host_steps("train") == [1, 2, 3, 4, 5]
    # In evaluation it runs on every eval step too (256 examples / batch 8), as TPUEstimator.
    assert host_steps("eval") == [5] * 32
    # The dict-form eval_metrics measure a model that learned in those 5 steps: the loss fell
    # from the first training step's and accuracy is well above chance (1/3). Over 80 unseeded
    # runs: accuracy 0.61-0.87, last-step/first-step loss up to 1.08 (so the seed above);
    # with tf_random_seed=1: accuracy 0.76, eval/first loss 0.39, last/first loss 0.44.
    (_, first_loss), *_ = host_losses("train")
    assert result["loss"] < first_loss, (result, host_losses("train"))
    assert host_losses("train")[-1][1] < first_loss
    assert result["accuracy"] > 0.5, result
    assert result["loss"] == pytest.approx(np.mean([v for _, v in host_losses("eval")]), rel=1e-5)


def test_tpu_estimator_argument_errors(tmp_path):
    seen = []
    config = tpu.RunConfig(model_dir=str(tmp_path))
    with pytest.raises(ValueError, match="are reserved keys but existed in params"):
        tpu.TPUEstimator(make_model_fn(seen), config=config, params={"batch_size": 4})
    with pytest.raises(ValueError, match="must be provided with type `tpu_config.RunConfig`"):
        tpu.TPUEstimator(make_model_fn(seen), config=estimator.RunConfig(), use_tpu=False)
    with pytest.raises(ValueError, match="`train_batch_size` cannot be `None`"):
        tpu.TPUEstimator(make_model_fn(seen), config=config, use_tpu=True)
    with pytest.raises(ValueError, match="needs to know which TPU to use"):
        tpu.TPUEstimator(make_model_fn(seen), config=config, use_tpu=True, train_batch_size=8)

    def no_params(features, labels, mode):
        raise AssertionError("not called")

    with pytest.raises(ValueError, match="does not include params argument"):
        tpu.TPUEstimator(no_params, config=config, use_tpu=False)
    est = tpu.TPUEstimator(make_model_fn(seen), config=config, use_tpu=False, train_batch_size=4)
    with pytest.raises(ValueError, match="input_fn .* does not include params argument"):
        est.train(lambda: tf.data.Dataset.range(3), steps=1)


NO_TPU_SCRIPT = """
import sys, time
import tensorflow as tf
from keras_estimator import tpu
server = tf.distribute.Server.create_local_server()  # a reachable cluster with no TPU
resolver = tf.distribute.cluster_resolver.TPUClusterResolver(tpu=server.target)
config = tpu.RunConfig(model_dir=sys.argv[1], cluster=resolver)
started = time.time()
try:
    tpu.TPUEstimator(lambda features, labels, mode, params: None, config=config,
                     use_tpu=True, train_batch_size=8)
except RuntimeError as exc:
    print("ERROR", time.time() - started, exc)
"""


def test_use_tpu_without_a_tpu_fails_fast_and_says_what_to_do(tmp_path):
    # In a subprocess: connecting to a cluster changes the process's TensorFlow context.
    result = run_python("-c", NO_TPU_SCRIPT, str(tmp_path))
    assert result.returncode == 0, result.stderr[-3000:]
    line = [x for x in result.stdout.splitlines() if x.startswith("ERROR")][-1]
    assert float(line.split()[1]) < 60  # no hang
    assert "No TPU could be initialised through 'grpc://localhost:" in line
    assert "use_tpu=False" in line


def test_tpu_config_and_spec_validation():
    assert tpu.TPUConfig().per_host_input_for_training == tpu.InputPipelineConfig.PER_HOST_V1
    assert tpu.TPUConfig(per_host_input_for_training=False).per_host_input_for_training == 1
    assert tpu.TPUConfig(iterations_per_loop="2m").iterations_per_loop == "2m"
    with pytest.raises(ValueError, match="Invalid TPUConfig `iterations_per_loop` value"):
        tpu.TPUConfig(iterations_per_loop=0)
    with pytest.raises(ValueError, match="num_cores_per_replica must be 1, 2, 4, 8"):
        tpu.TPUConfig(num_cores_per_replica=3)
    with pytest.raises(ValueError, match="Both master and cluster are set"):
        tpu.RunConfig(master="grpc://x", cluster=object())
    config = tpu.RunConfig(tpu_config=tpu.TPUConfig(iterations_per_loop=7), master="grpc://m")
    assert config.master == "grpc://m" and config.evaluation_master == "grpc://m"
    assert config.replace(save_summary_steps=5).tpu_config.iterations_per_loop == 7
    replaced = config.replace(tpu_config=tpu.TPUConfig(iterations_per_loop=3))
    assert replaced.tpu_config.iterations_per_loop == 3
    loss = tf.constant(1.0)
    with pytest.raises(ValueError, match="eval_metrics should have two elements"):
        tpu.TPUEstimatorSpec("eval", loss=loss, eval_metrics=(lambda a: {},))
    with pytest.raises(RuntimeError, match="length of tensors 2 does not match"):
        tpu.TPUEstimatorSpec("eval", loss=loss, eval_metrics=(lambda a: {}, [loss, loss]))
    with pytest.raises(TypeError, match="All hooks must be SessionRunHook instances"):
        tpu.TPUEstimatorSpec("train", loss=loss, training_hooks=[object()])
