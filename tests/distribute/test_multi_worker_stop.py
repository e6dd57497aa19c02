"""A stop asked for on one task of a MultiWorkerMirroredStrategy job ends training on every
task at the same step: the per-call step vote carries it. Without it the other task waited
in its next vote (or the end-of-training barrier) for 30 minutes. Real processes on
127.0.0.1."""

import json
import os

import numpy as np
import pytest
from helpers import SCRIPTS, free_ports, start_python

SCRIPT = os.path.join(SCRIPTS, "multi_worker_stop_one_task.py")


@pytest.mark.parametrize(
    "case, stopping",
    [  # the worker's StopAtStepHook; SIGTERM on the chief (the slow tier)
        ("hook", 1),
        pytest.param("sigterm", 0, marks=pytest.mark.slow),
    ],
)
def test_a_stop_on_one_task_ends_every_task_at_the_same_step(tmp_path, case, stopping):
    model_dir = str(tmp_path / "model")
    ports = ",".join(free_ports(2))
    procs = [
        start_python(
            SCRIPT, str(i), ports, model_dir, str(tmp_path / f"{i}.json"), case, str(stopping)
        )  # fmt: skip
        for i in range(2)
    ]
    logs = []
    try:
        for proc in procs:  # a task left waiting would hang for 30 minutes
            logs.append(proc.communicate(timeout=120)[0])
    finally:
        for proc in procs:
            proc.kill()
    for proc, log in zip(procs, logs):
        assert proc.returncode == 0, log[-3000:]
    chief, worker = (json.loads((tmp_path / f"{i}.json").read_text()) for i in range(2))
    assert chief["is_chief"] and not worker["is_chief"]
    step = chief["global_step"]
    assert worker["global_step"] == step
    if case == "hook":
        assert step == 7  # StopAtStepHook(last_step=7) on the worker only
        assert chief["status"] == worker["status"] == "returned"
    else:
        assert 5 <= step <= 7  # SIGTERM at step 5: training stops after a step or two
        assert chief["status"] == "exit 143" and worker["status"] == "returned"
        assert "Training stopped by SIGTERM after step" in logs[0]
    assert "Another task of the cluster stopped training at step" in logs[1 - stopping]
    # The chief's final checkpoint holds the step every task ended at, and their weights.
    assert chief["latest_checkpoint"].endswith(f"model.ckpt-{step}")
    assert worker["latest_checkpoint"] == chief["latest_checkpoint"]
    np.testing.assert_allclose(chief["kernel"], worker["kernel"], rtol=1e-6)
