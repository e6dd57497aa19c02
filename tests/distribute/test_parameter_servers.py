"""TF_CONFIG clusters with a ps task: ParameterServerStrategy with the chief coordinating.

Three real processes on 127.0.0.1 (chief, worker, ps) run the same train_and_evaluate
script, each bounded by a timeout.
"""

import json
import os

import pytest
import tensorflow as tf2
from helpers import (
    SCRIPTS,
    classifier_model_fn,
    dataset_input_fn,
    free_ports,
    make_estimator,
    start_python,
)

import keras_estimator as estimator

SCRIPT = os.path.join(SCRIPTS, "parameter_server_task.py")


def test_chief_coordinates_a_worker_and_a_ps_task(tmp_path, toy_data):
    jobs = ("chief", "worker", "ps")
    cluster = {job: [f"127.0.0.1:{port}"] for job, port in zip(jobs, free_ports(len(jobs)))}
    model_dir = str(tmp_path / "model")
    tasks = {
        job: start_python(SCRIPT, job, json.dumps(cluster), model_dir, "60")
        for job in ("ps", "worker", "chief")
    }
    try:
        chief_log = tasks["chief"].communicate(timeout=240)[0]
        worker_log = tasks["worker"].communicate(timeout=60)[0]
        ps_running = tasks["ps"].poll() is None
    finally:
        for task in tasks.values():
            task.kill()
    assert tasks["chief"].returncode == 0, chief_log[-3000:]
    assert "ParameterServerStrategy" in chief_log
    assert "chief done" in chief_log
    assert "hook_step = " in chief_log  # the hook's fetch, pruned from the scheduled step
    # The worker served the chief's steps and stopped once max_steps was checkpointed;
    # the ps task serves until the job is stopped, as under tf.estimator.
    assert tasks["worker"].returncode == 0, worker_log[-3000:]
    assert "worker done" in worker_log
    assert ps_running

    # The checkpoint is an ordinary one: same names as single-machine training.
    x, y = toy_data
    est = make_estimator(model_dir)
    assert est.get_variable_value("global_step") == 60
    single = make_estimator(tmp_path / "single")
    single.train(dataset_input_fn(x, y, 16, repeat=True), steps=1)
    assert est.get_variable_names() == single.get_variable_names()
    assert est.evaluate(dataset_input_fn(x, y, 64))["global_step"] == 60


def test_ps_cluster_with_a_non_ps_strategy_is_refused(tmp_path, monkeypatch):
    cluster = {"chief": ["127.0.0.1:1"], "worker": ["127.0.0.1:2"], "ps": ["127.0.0.1:3"]}
    monkeypatch.setenv("TF_CONFIG", json.dumps({"cluster": cluster, "task": {"type": "chief"}}))
    config = estimator.RunConfig(
        model_dir=str(tmp_path), train_distribute=tf2.distribute.OneDeviceStrategy("/cpu:0")
    )
    with pytest.raises(ValueError, match="TF_CONFIG names ps tasks, but RunConfig train_distri"):
        estimator.Estimator(classifier_model_fn, config=config, params={})
