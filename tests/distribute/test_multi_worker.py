"""Two worker processes on 127.0.0.1 train one model with MultiWorkerMirroredStrategy."""

import json
import os

import numpy as np
import pytest
from helpers import SCRIPTS, dataset_input_fn, free_ports, make_estimator, start_python

SCRIPT = os.path.join(SCRIPTS, "multi_worker_train.py")


def run_workers(script, *args_per_worker):
    """Runs one process per argument list on free loopback ports; returns (procs, outputs)."""
    ports = ",".join(free_ports(len(args_per_worker)))
    procs = [start_python(script, str(i), ports, *args) for i, args in enumerate(args_per_worker)]
    outputs = []
    try:
        for proc in procs:
            outputs.append(proc.communicate(timeout=300)[0])
    finally:
        for proc in procs:
            proc.kill()
    return procs, outputs


def test_two_workers_train_the_same_weights_and_only_the_chief_writes(tmp_path):
    procs, outputs = run_workers(
        SCRIPT, *[(str(tmp_path / f"w{i}"), str(tmp_path / f"{i}.json")) for i in range(2)]
    )
    for proc, output in zip(procs, outputs):
        assert proc.returncode == 0, output[-3000:]
    chief, worker = (json.loads((tmp_path / f"{i}.json").read_text()) for i in range(2))
    assert chief["is_chief"] and not worker["is_chief"]
    assert chief["global_step"] == worker["global_step"] == 12
    np.testing.assert_allclose(chief["kernel"], worker["kernel"], rtol=1e-6)
    # Only the chief saves checkpoints and writes summaries.
    assert (tmp_path / "w0" / "checkpoint").exists()
    assert any(name.startswith("events.out") for name in os.listdir(tmp_path / "w0"))
    assert not (tmp_path / "w1").exists() or os.listdir(tmp_path / "w1") == []
    # The chief's model_dir evaluates and predicts afterwards, in another process.
    est = make_estimator(tmp_path / "w0")
    assert est.get_variable_value("global_step") == 12
    np.testing.assert_allclose(est.get_variable_value("dense/kernel"), chief["kernel"], rtol=1e-6)
    rng = np.random.RandomState(0)
    x = rng.randn(128, 8).astype("float32")
    y = np.argmax(x[:, :3], 1).astype("int64")
    assert est.evaluate(dataset_input_fn(x, y, 32))["global_step"] == 12
    assert len(list(est.predict(dataset_input_fn(x[:5], batch_size=5)))) == 5


@pytest.mark.slow  # a fault-tolerance case; the default suite keeps its sibling
def test_a_worker_dying_fails_the_chief_fast_and_training_resumes(tmp_path):
    script = os.path.join(SCRIPTS, "multi_worker_dies.py")
    procs, outputs = run_workers(script, (str(tmp_path / "chief"),), (str(tmp_path / "w1"),))
    assert procs[1].returncode == -9  # killed at step 25
    assert procs[0].returncode == 3, outputs[0][-3000:]
    failure = [line for line in outputs[0].splitlines() if line.startswith("FAILED")][-1]
    assert float(failure.split()[2].rstrip("s:")) < 120  # bounded: no hang
    assert "Another task of the distributed training job stopped responding" in failure
    assert "Fix: restart every task" in failure
    # The chief's last checkpoint is complete; training resumes from it.
    est = make_estimator(tmp_path / "chief")
    saved = est.get_variable_value("global_step")
    assert saved in (10, 20) and f"model.ckpt-{saved}" in failure
    rng = np.random.RandomState(0)
    x = rng.randn(64, 8).astype("float32")
    y = np.argmax(x[:, :3], 1).astype("int64")
    est.train(dataset_input_fn(x, y, 8, repeat=True), steps=5)
    assert est.get_variable_value("global_step") == saved + 5
