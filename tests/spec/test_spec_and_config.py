"""EstimatorSpec validation and RunConfig defaults, as in tf.estimator 2.15."""

import json

import keras
import pytest
import tensorflow as tf
from helpers import run_python

import keras_estimator as estimator
from keras_estimator import EstimatorSpec, ModeKeys, RunConfig


def in_graph(fn):
    with tf.Graph().as_default():
        return fn()


def test_mode_keys():
    assert (ModeKeys.TRAIN, ModeKeys.EVAL, ModeKeys.PREDICT) == ("train", "eval", "infer")


@pytest.mark.parametrize(
    "build, error, message",
    [
        (lambda: EstimatorSpec(ModeKeys.TRAIN, train_op=tf.no_op()), ValueError, "Missing loss."),
        (
            lambda: EstimatorSpec(ModeKeys.TRAIN, loss=tf.constant(1.0)),
            ValueError,
            "Missing train_op.",
        ),
        (lambda: EstimatorSpec(ModeKeys.EVAL), ValueError, "Missing loss."),
        (lambda: EstimatorSpec(ModeKeys.PREDICT), ValueError, "Missing predictions."),
        (
            lambda: EstimatorSpec(ModeKeys.EVAL, loss=tf.ones([2])),
            ValueError,
            "Loss must be scalar",
        ),
        (lambda: EstimatorSpec(ModeKeys.EVAL, loss=1.0), TypeError, "loss must be Tensor"),
        (
            lambda: EstimatorSpec(ModeKeys.TRAIN, loss=tf.constant(1.0), train_op="op"),
            TypeError,
            "train_op must be Operation or Tensor",
        ),
        (
            lambda: EstimatorSpec(ModeKeys.PREDICT, predictions={"a": 1}),
            TypeError,
            r"predictions\[a\] must be Tensor",
        ),
        (
            lambda: EstimatorSpec(ModeKeys.EVAL, loss=tf.constant(1.0), eval_metric_ops=[1]),
            TypeError,
            "eval_metric_ops must be a dict",
        ),
        (
            lambda: EstimatorSpec(
                ModeKeys.EVAL, loss=tf.constant(1.0), eval_metric_ops={"m": tf.constant(1.0)}
            ),
            TypeError,
            r"must be \(metric_value, update_op\) tuples",
        ),
        (
            lambda: EstimatorSpec(
                ModeKeys.EVAL, loss=tf.constant(1.0), eval_metric_ops={"m": (1, 2)}
            ),
            TypeError,
            r"must be \(metric_value, update_op\) tuples",
        ),
        (
            lambda: EstimatorSpec(
                ModeKeys.EVAL, loss=tf.constant(1.0), evaluation_hooks=[object()]
            ),
            TypeError,
            "All hooks must be SessionRunHook instances",
        ),
        (
            lambda: EstimatorSpec(ModeKeys.EVAL, loss=tf.constant(1.0), scaffold=object()),
            TypeError,
            "scaffold must be tf.train.Scaffold",
        ),
        (
            lambda: EstimatorSpec("training", loss=tf.constant(1.0)),
            ValueError,
            "mode must be one of",
        ),
    ],
)
def test_invalid_specs_raise_tf_estimator_errors(build, error, message):
    with pytest.raises(error, match=message):
        in_graph(build)


def test_valid_specs_fill_defaults_and_accept_keras_objects():
    def build():
        loss = tf.constant([2.0])  # shape [1] is reshaped to a scalar
        metric = keras.metrics.Mean()
        metric.update_state(loss)  # 2.15 refused a Keras metric without updates
        spec = EstimatorSpec(
            ModeKeys.EVAL,
            loss=loss,
            eval_metric_ops={"m": metric, "v1": tf.compat.v1.metrics.mean(loss)},
        )
        assert spec.loss.shape == ()
        assert spec.predictions == {}
        assert isinstance(spec.scaffold, tf.compat.v1.train.Scaffold)
        assert spec.training_hooks == () and spec.export_outputs is None
        train = EstimatorSpec(ModeKeys.TRAIN, loss=loss, train_op=keras.optimizers.SGD(0.1))
        assert isinstance(train.train_op, keras.optimizers.Optimizer)
        return spec

    in_graph(build)


def test_replace_validates_and_keeps_mode():
    def build():
        spec = EstimatorSpec(ModeKeys.EVAL, loss=tf.constant(1.0))
        with pytest.raises(ValueError, match="mode of EstimatorSpec cannot be changed."):
            spec._replace(mode=ModeKeys.TRAIN)
        with pytest.raises(ValueError, match="Missing loss."):
            spec._replace(loss=None)
        p = tf.constant(1.0)
        replaced = spec._replace(predictions={"p": p})
        assert replaced.predictions == {"p": p} and replaced.predictions["p"] is p
        assert replaced.mode == ModeKeys.EVAL and replaced.loss is spec.loss

    in_graph(build)


def test_run_config_defaults_match_tf_estimator(monkeypatch):
    monkeypatch.delenv("TF_CONFIG", raising=False)
    config = RunConfig()
    assert config.save_summary_steps == 100
    assert config.save_checkpoints_secs == 600 and config.save_checkpoints_steps is None
    assert config.keep_checkpoint_max == 5
    assert config.keep_checkpoint_every_n_hours == 10000
    assert config.log_step_count_steps == 100
    assert config.tf_random_seed is None and config.model_dir is None
    assert config.is_chief and config.task_type == "worker" and config.task_id == 0
    assert config.num_ps_replicas == 0 and config.num_worker_replicas == 1
    steps = RunConfig(save_checkpoints_steps=10)
    assert steps.save_checkpoints_secs is None
    assert steps.replace(save_checkpoints_secs=5).save_checkpoints_steps is None


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"save_checkpoints_steps": 1, "save_checkpoints_secs": 1}, "cannot be both set"),
        ({"keep_checkpoint_max": -1}, "keep_checkpoint_max should be >= 0"),
        ({"log_step_count_steps": 0}, "log_step_count_steps should be > 0"),
        ({"tf_random_seed": 1.5}, "tf_random_seed must be integer."),
        ({"model_dir": ""}, "model_dir should be non-empty."),
        ({"save_summary_steps": -1}, "save_summary_steps should be >= 0"),
    ],
)
def test_run_config_rejects_bad_values(kwargs, message):
    with pytest.raises(ValueError, match=message):
        RunConfig(**kwargs)


def test_run_config_replace_rejects_unknown_properties():
    with pytest.raises(ValueError, match="Replacing is_chief is not supported"):
        RunConfig().replace(is_chief=False)


def test_run_config_reads_tf_config(monkeypatch):
    monkeypatch.setenv(
        "TF_CONFIG",
        json.dumps(
            {
                "cluster": {"chief": ["h:1"], "worker": ["h:2", "h:3"], "ps": ["h:4"]},
                "task": {"type": "worker", "index": 1},
            }
        ),
    )
    config = RunConfig()
    assert (config.task_type, config.task_id, config.is_chief) == ("worker", 1, False)
    assert config.num_ps_replicas == 1 and config.num_worker_replicas == 3
    assert config.master == "grpc://h:3"
    monkeypatch.setenv("TF_CONFIG", "{not json")
    with pytest.raises(ValueError, match="TF_CONFIG is not valid JSON"):
        RunConfig()
    cluster = {"chief": ["h:1"], "worker": ["h:2"]}
    trainer = {"type": "trainer", "index": 0}  # 2.15 asked for the index before the type
    monkeypatch.setenv("TF_CONFIG", json.dumps({"cluster": cluster, "task": trainer}))
    with pytest.raises(ValueError, match="trainer is not a valid task_type in the cluster_spec"):
        RunConfig()


def test_estimator_config_and_model_dir_rules(tmp_path):
    def model_fn(features, labels, mode):
        raise AssertionError("not called")

    with pytest.raises(ValueError, match="config must be an instance of `RunConfig`"):
        estimator.Estimator(model_fn, config={"model_dir": "x"})
    with pytest.raises(ValueError, match="are set both in constructor and `RunConfig`"):
        estimator.Estimator(
            model_fn, model_dir=str(tmp_path / "a"), config=RunConfig(model_dir=str(tmp_path / "b"))
        )
    est = estimator.Estimator(model_fn, config=RunConfig(model_dir=str(tmp_path / "c")))
    assert est.model_dir == str(tmp_path / "c")


def test_session_config_maps_to_tf_config_and_warns_about_the_rest(tmp_path, caplog):
    import logging

    soft = tf.config.get_soft_device_placement()
    tf.config.set_soft_device_placement(False)
    proto = tf.compat.v1.ConfigProto(allow_soft_placement=True, operation_timeout_in_ms=5)
    try:
        with caplog.at_level(logging.WARNING, logger="keras_estimator"):
            estimator.Estimator(
                lambda features, labels, mode: None,
                config=RunConfig(model_dir=str(tmp_path), session_config=proto),
            )
        assert tf.config.get_soft_device_placement() is True
        warning = [r.getMessage() for r in caplog.records if "session_config" in r.getMessage()]
        assert len(warning) == 1 and "operation_timeout_in_ms" in warning[0]
    finally:
        tf.config.set_soft_device_placement(soft)


def test_session_config_thread_counts_in_a_fresh_process(tmp_path):
    code = (
        "import tensorflow as tf, keras_estimator as ke\n"
        "proto = tf.compat.v1.ConfigProto(intra_op_parallelism_threads=1,"
        " inter_op_parallelism_threads=1)\n"
        f"ke.Estimator(lambda features: None, model_dir={str(tmp_path)!r},"
        " config=ke.RunConfig(session_config=proto))\n"
        "print(tf.config.threading.get_intra_op_parallelism_threads(),"
        " tf.config.threading.get_inter_op_parallelism_threads())\n"
    )
    out = run_python("-c", code)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split()[-2:] == ["1", "1"]


_CLUSTER = {"chief": ["c:1"], "worker": ["w:1", "w:2"], "ps": ["p:1", "p:2"]}


@pytest.mark.parametrize(
    "task, expected",
    [  # (task_type, task_id, is_chief, workers, ps, master, global_id): tf.estimator 2.15's
        ({"type": "chief", "index": 0}, ("chief", 0, True, 3, 2, "grpc://c:1", 0)),
        ({"type": "worker", "index": 0}, ("worker", 0, False, 3, 2, "grpc://w:1", 1)),
        ({"type": "worker", "index": 1}, ("worker", 1, False, 3, 2, "grpc://w:2", 2)),
        ({"type": "ps", "index": 1}, ("ps", 1, False, 3, 2, "grpc://p:2", 4)),
        ({"type": "evaluator", "index": 0}, ("evaluator", 0, False, 0, 0, "", None)),
    ],
)
def test_tf_config_cluster_properties_match_tf_estimator(monkeypatch, task, expected):
    monkeypatch.setenv("TF_CONFIG", json.dumps({"cluster": _CLUSTER, "task": task}))
    config = RunConfig()
    got = (
        config.task_type,
        config.task_id,
        config.is_chief,
        config.num_worker_replicas,
        config.num_ps_replicas,
        config.master,
        config.global_id_in_cluster,
    )
    assert got == expected
