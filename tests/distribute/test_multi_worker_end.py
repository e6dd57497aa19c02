"""A multi-worker job ends the same on every task: train() returns on every task only after
the chief's final checkpoint is complete. Real processes on 127.0.0.1 (chief, worker and
evaluator), one shared model_dir, as a legacy train_and_evaluate job runs."""

import json
import os

import numpy as np
import pytest
from helpers import SCRIPTS, free_ports, start_python

JOB = os.path.join(SCRIPTS, "multi_worker_train_and_evaluate.py")
BARRIER = os.path.join(SCRIPTS, "cluster_barrier_task.py")


def run_tasks(script, tasks, args, timeout=600, wait_for=None):
    """Runs `script <task> <ports> *args(task)` for every task at once, waits for the tasks
    in `wait_for` (default: all), kills the rest; returns {task: (returncode, log)}."""
    ports = ",".join(free_ports(2))
    procs = {task: start_python(script, task, ports, *args(task)) for task in tasks}
    logs = {}
    try:
        for task in wait_for or tasks:
            logs[task] = (procs[task].communicate(timeout=timeout)[0], procs[task].returncode)
    finally:
        for proc in procs.values():
            proc.kill()
    return {task: (rc, log) for task, (log, rc) in logs.items()}


def run_job(tmp_path, model, tasks):
    model_dir = str(tmp_path / "model")  # one model_dir, shared by every task
    ran = run_tasks(JOB, tasks, lambda task: (model_dir, str(tmp_path / f"{task}.json"), model))
    for task, (rc, log) in ran.items():
        assert rc == 0, f"{task}: {log[-3000:]}"
    return {task: json.loads((tmp_path / f"{task}.json").read_text()) for task in tasks}


def test_every_task_returns_after_the_chiefs_final_checkpoint(tmp_path):
    # Saves every 20 steps, 60 steps; the chief's final save takes 4 s (a saving listener):
    # without the barrier the worker returned first and read step 40 from model_dir.
    got = run_job(tmp_path, "classifier", ("chief", "worker", "evaluator"))
    chief, worker, evaluator = got["chief"], got["worker"], got["evaluator"]
    assert chief["is_chief"] and not worker["is_chief"]
    assert chief["global_step"] == worker["global_step"] == 60
    assert chief["in_memory_step"] == worker["in_memory_step"] == 60
    assert chief["weights"].keys() == worker["weights"].keys() and chief["weights"]
    for name, value in chief["weights"].items():
        np.testing.assert_allclose(worker["weights"][name], value, rtol=1e-6)
    # Several steps per call, the same on every task: the chief's checkpoints every 20
    # steps end the worker's runs too (log_step_count_steps=100 ends the first at 1).
    assert chief["returns"] == worker["returns"] == [1, 20, 40, 60]
    # The evaluator evaluated the checkpoints as they came and stopped at max_steps.
    assert evaluator["eval_step"] == 60 and evaluator["evaluations"][-1] == 60
    for name, value in chief["weights"].items():
        np.testing.assert_allclose(evaluator["weights"][name], value, rtol=1e-6)


def test_docs_tutorial_pattern_trains_to_the_end_of_the_input_on_every_task(tmp_path):
    # The TF docs' "Multi-worker training with Estimator": MultiWorkerMirroredStrategy,
    # train_and_evaluate, a Keras Sequential model inside the model_fn, input sharded with
    # the InputContext, TrainSpec without max_steps (until the input ends).
    got = run_job(tmp_path, "tutorial", ("chief", "worker"))
    chief, worker = got["chief"], got["worker"]
    # 256 examples, 2 shards of 128, per-replica batches of 16: 8 steps on each task.
    assert chief["global_step"] == worker["global_step"] == 8
    assert any(name.startswith("sequential/") for name in chief["weights"])
    for name, value in chief["weights"].items():
        np.testing.assert_allclose(worker["weights"][name], value, rtol=1e-6)
    assert (tmp_path / "model" / "model.ckpt-8.index").exists()


@pytest.mark.slow  # a fault-tolerance case; the default suite keeps its sibling
def test_tasks_ending_at_different_steps_or_absent_fail_clearly_not_hang():
    ran = run_tasks(BARRIER, ("0", "1"), lambda task: ("different_steps",), timeout=300)
    for rc, log in ran.values():
        assert rc == 3, log[-3000:]
        assert "REFUSED ValueError: The tasks of the multi-worker job finished training at " \
            "different global steps" in log  # fmt: skip
    ran = run_tasks(BARRIER, ("0", "1"), lambda task: ("absent",), timeout=300, wait_for=("0",))
    rc, log = ran["0"]
    assert rc == 3, log[-3000:]
    assert "REFUSED DeadlineExceededError: This task finished training at step 10, but another " \
        "task of the cluster did not finish training within 3s" in log  # fmt: skip
    assert "Received: step=10, timeout_secs=3" in log
