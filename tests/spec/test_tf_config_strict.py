"""TF_CONFIG read strictly: every wrong type or value is a ValueError naming TF_CONFIG and
the field (tf.estimator 2.15 truncated 0.9 / -0.5 indexes and failed with AttributeError,
OverflowError or RecursionError on the rest); what 2.15 accepted still works."""

import json

import pytest

import keras_estimator as estimator

CLUSTER = {"chief": ["127.0.0.1:1"], "worker": ["127.0.0.1:2"]}


def _config_with(monkeypatch, tf_config):
    text = tf_config if isinstance(tf_config, str) else json.dumps(tf_config)
    monkeypatch.setenv("TF_CONFIG", text)
    return estimator.RunConfig()


@pytest.mark.parametrize(
    "tf_config, field",
    [
        ({"cluster": CLUSTER, "task": {"type": "worker", "index": 0.9}}, "index"),
        ({"cluster": CLUSTER, "task": {"type": "worker", "index": -0.5}}, "index"),
        ({"cluster": CLUSTER, "task": {"type": "worker", "index": "one"}}, "index"),
        ({"cluster": CLUSTER, "task": {"type": "worker", "index": True}}, "index"),
        ({"cluster": CLUSTER, "task": ["worker", 0]}, "task"),
        ({"cluster": CLUSTER, "task": {"type": 7, "index": 0}}, "type"),
        ({"cluster": ["127.0.0.1:1"], "task": {"type": "worker", "index": 0}}, "cluster"),
        ({"cluster": {"worker": "127.0.0.1:2"}, "task": {"type": "worker", "index": 0}}, "worker"),
        ({"cluster": {"worker": [2222]}, "task": {"type": "worker", "index": 0}}, "worker"),
        ('{"cluster": {}, "task": {"type": "worker", "index": NaN}}', "NaN"),
        ('{"cluster": {}, "task": {"type": "worker", "index": 1e999}}', "too large"),
        ("[1, 2]", "JSON object"),
        ("{not json", "not valid JSON"),
        ('{"a": ' * 100_000 + "1" + "}" * 100_000, "nests"),
        ('{"a": ' * 40 + "1" + "}" * 40, "nests more than"),
    ],
    ids=[
        "index-0.9", "index-negative-half", "index-word", "index-bool", "task-list",
        "type-number", "cluster-list", "job-string", "job-ports", "nan", "huge-number",
        "not-an-object", "bad-json", "deep-json", "too-deep",
    ],
)  # fmt: skip
def test_a_wrong_tf_config_is_a_value_error_naming_the_field(monkeypatch, tf_config, field):
    with pytest.raises(ValueError, match="TF_CONFIG") as raised:
        _config_with(monkeypatch, tf_config)
    assert field in str(raised.value)
    assert "Received:" in str(raised.value)


def test_what_tf_estimator_accepted_still_reads_the_same(monkeypatch):
    config = _config_with(
        monkeypatch, {"cluster": CLUSTER, "task": {"type": "worker", "index": "0"}}
    )
    assert config.task_type == "worker" and config.task_id == 0 and not config.is_chief
    config = _config_with(monkeypatch, {"cluster": CLUSTER, "task": {"type": "chief", "index": 0}})
    assert config.is_chief and config.num_worker_replicas == 2
    assert _config_with(monkeypatch, "").task_type == "worker"  # empty: local training
