"""RunConfig's TF_CONFIG reading and argument checks, as tf.estimator 2.15 did them."""

import json
import re

import pytest
import tensorflow as tf

from keras_estimator import RunConfig
from keras_estimator.tpu import RunConfig as TPURunConfig

_DEVICE_FN = 'device_fn must be callable with exactly one argument "op".'
_JOB = {"chief": ["c:1"], "worker": ["w:1", "w:2"], "ps": ["p:1"]}


def _config(monkeypatch, tf_config, cls=RunConfig, **kwargs):
    monkeypatch.setenv("TF_CONFIG", json.dumps(tf_config))
    return cls(**kwargs)


def _masters(config):
    return config.master, config.evaluation_master


@pytest.mark.parametrize(
    "tf_config, expected",
    [
        ({"cluster": {"chief": ["c:1"]}, "task": {"type": "chief", "index": 0}}, ("", "")),
        ({"cluster": {"master": ["m:1"]}, "task": {"type": "master", "index": 0}}, ("", "")),
        ({"cluster": _JOB, "task": {"type": "worker", "index": 1}}, ("grpc://w:2", "")),
        ({"cluster": _JOB, "task": {"type": "ps", "index": 0}}, ("grpc://p:1", "")),
        (
            {"cluster": _JOB, "task": {"type": "chief", "index": 0}, "session_master": "s"},
            ("s", ""),
        ),
        (
            {
                "cluster": _JOB,
                "task": {"type": "evaluator", "index": 3},
                "eval_session_master": "e",
            },
            ("", "e"),
        ),
        ({"session_master": "s", "eval_session_master": "e"}, ("s", "e")),
        ({}, ("", "")),
    ],
)
def test_masters_come_from_tf_config_as_in_2_15(monkeypatch, tf_config, expected):
    assert _masters(_config(monkeypatch, tf_config)) == expected


def test_the_evaluator_sees_no_training_cluster(monkeypatch):
    config = _config(monkeypatch, {"cluster": _JOB, "task": {"type": "evaluator", "index": 7}})
    assert config.cluster_spec.as_dict() == {}
    assert (config.task_type, config.task_id, config.is_chief) == ("evaluator", 7, False)
    assert (config.num_worker_replicas, config.num_ps_replicas) == (0, 0)
    assert config.global_id_in_cluster is None


def test_tpu_run_config_masters_follow_tf_config_unless_given(monkeypatch):
    both = {"session_master": "s", "eval_session_master": "e"}
    assert _masters(_config(monkeypatch, both, TPURunConfig)) == ("s", "e")
    only_master = {"session_master": "s"}
    assert _masters(_config(monkeypatch, only_master, TPURunConfig)) == ("s", "s")
    assert _masters(_config(monkeypatch, both, TPURunConfig, master="m")) == ("m", "e")


@pytest.mark.parametrize(
    "tf_config, message",
    [
        ({"cluster": {"worker": ["w:1"]}}, 'it must have one "chief" node'),
        ({"cluster": {"chief": ["c:1", "c:2"]}}, 'must have only one "chief" node'),
        ({"cluster": {"master": ["m:1", "m:2"]}}, 'must have only one "master" node'),
        ({"cluster": _JOB, "task": {"index": 0}}, "task type must be set"),
        ({"cluster": _JOB, "task": {"type": "worker"}}, "task index must be set"),
        ({"cluster": _JOB, "task": {"type": "worker", "index": -1}}, "must be non-negative"),
        ({"cluster": _JOB, "task": {"type": "worker", "index": 2}}, "2 is not a valid task_id"),
        ({"cluster": _JOB, "task": {"type": "x", "index": 0}}, "x is not a valid task_type"),
        ({"task": {"type": "chief", "index": 0}}, "task type must be WORKER"),
        ({"task": {"type": "worker", "index": 1}}, "task index must be 0"),
        (
            {"cluster": {"master": ["m:1"], "chief": ["c:1"]}, "task": {"type": "master"}},
            "job `chief` is not supported",
        ),
        (
            {"cluster": {"master": ["m:1"]}, "task": {"type": "evaluator", "index": 0}},
            "task_type `evaluator` is not supported",
        ),
    ],
)
def test_bad_tf_config_is_refused_with_2_15s_message(monkeypatch, tf_config, message):
    with pytest.raises(ValueError, match=message) as info:
        _config(monkeypatch, tf_config)
    assert "Fix:" in str(info.value) and "Received:" in str(info.value)


def test_a_service_that_is_not_an_object_is_a_type_error(monkeypatch):
    with pytest.raises(TypeError, match='If "service" is set in TF_CONFIG, it must be a dict'):
        _config(monkeypatch, {"service": [1]})
    assert _config(monkeypatch, {"service": {"a": 1}}).service == {"a": 1}


def test_under_a_training_strategy_the_task_is_read_leniently(monkeypatch):
    # 2.15 left the cluster to its distribute coordinator then; keras_estimator reads the
    # task itself: a cluster of workers only, worker 0 the chief, the index defaulting to 0.
    strategy = tf.distribute.OneDeviceStrategy("/cpu:0")
    workers = {"cluster": {"worker": ["w:1", "w:2"]}, "task": {"type": "worker"}}
    config = _config(monkeypatch, workers, train_distribute=strategy)
    assert (config.task_type, config.task_id, config.is_chief) == ("worker", 0, True)
    assert config.num_worker_replicas == 2 and config.master == "grpc://w:1"
    second = {"cluster": {"worker": ["w:1", "w:2"]}, "task": {"type": "worker", "index": 1}}
    assert not _config(monkeypatch, second, train_distribute=strategy).is_chief


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"device_fn": lambda x: "/cpu:0"}, _DEVICE_FN),
        ({"device_fn": "/cpu:0"}, _DEVICE_FN),
        ({"protocol": "http"}, "protocol should be grpc or grpc+verbs"),
        ({"experimental_max_worker_delay_secs": "5"}, "experimental_max_worker_delay_secs must be"),
        ({"session_creation_timeout_secs": 0}, "session_creation_timeout_secs should be > 0"),
    ],
)
def test_argument_checks_of_2_15_in_init_and_replace(monkeypatch, kwargs, message):
    monkeypatch.delenv("TF_CONFIG", raising=False)
    with pytest.raises(ValueError, match=re.escape(message)) as info:
        RunConfig(**kwargs)
    assert str(info.value).startswith(message) and "Received:" in str(info.value)
    with pytest.raises(ValueError, match=re.escape(message)):
        RunConfig().replace(**kwargs)
    fine = RunConfig(device_fn=lambda op: "/cpu:0", protocol="grpc+verbs")
    assert fine.protocol == "grpc+verbs"


@pytest.mark.parametrize("argument", ["train_distribute", "eval_distribute"])
def test_a_tf2_parameter_server_strategy_is_refused(monkeypatch, argument):
    monkeypatch.delenv("TF_CONFIG", raising=False)
    cls = tf.distribute.experimental.ParameterServerStrategy
    unbuilt = cls.__new__(cls)  # no cluster needed: only the class is checked
    with pytest.raises(ValueError, match="Please use `tf.compat.v1.distribute.experimental") as e:
        RunConfig(**{argument: unbuilt})
    assert f"Received: {argument}=ParameterServerStrategy" in str(e.value)
