"""A parameter-server cluster of 2 workers and 2 ps tasks, and a worker killed with SIGKILL
mid-training: the chief's coordinator runs that worker's steps on the other one and training
reaches max_steps. Real processes on 127.0.0.1."""

import json
import os
import re
import signal
import time

import pytest
import tensorflow as tf2
from helpers import SCRIPTS, free_ports, make_estimator, start_python

SCRIPT = os.path.join(SCRIPTS, "parameter_server_cluster_task.py")
MAX_STEPS = 40


@pytest.mark.slow  # a fault-tolerance case; the default suite keeps its sibling
def test_a_worker_killed_mid_training_does_not_stop_the_job(tmp_path):
    ports = iter(free_ports(5))
    cluster = {
        "chief": [f"127.0.0.1:{next(ports)}"],
        "worker": [f"127.0.0.1:{next(ports)}" for _ in range(2)],
        "ps": [f"127.0.0.1:{next(ports)}" for _ in range(2)],
    }
    model_dir, out = str(tmp_path / "model"), str(tmp_path / "chief.json")
    tasks = {
        (job, index): start_python(
            SCRIPT, job, str(index), json.dumps(cluster), model_dir, str(MAX_STEPS), out, "chunked"
        )
        for job in ("ps", "worker", "chief")
        for index in range(len(cluster[job]))
    }
    chief, victim, survivor = tasks["chief", 0], tasks["worker", 1], tasks["worker", 0]
    try:
        # Kill worker 1 once the chief has checkpointed step 10: steps are in flight on it.
        deadline = time.time() + 600
        while time.time() < deadline and chief.poll() is None:
            checkpoint = tf2.train.latest_checkpoint(model_dir)
            if checkpoint and int(checkpoint.rsplit("-", 1)[1]) >= 10:
                break
            time.sleep(0.1)
        killed_at = int(tf2.train.latest_checkpoint(model_dir).rsplit("-", 1)[1])
        victim.send_signal(signal.SIGKILL)
        chief_log = chief.communicate(timeout=600)[0]
        survivor_log = survivor.communicate(timeout=120)[0]
        ps_running = [tasks["ps", i].poll() is None for i in range(2)]
    finally:
        for task in tasks.values():
            task.kill()
    assert victim.wait() == -signal.SIGKILL
    assert killed_at < MAX_STEPS, "the job ended before the worker was killed"
    assert chief.returncode == 0, chief_log[-3000:]
    assert "chief:0 done" in chief_log
    assert survivor.returncode == 0 and "worker:0 done" in survivor_log, survivor_log[-3000:]
    assert ps_running == [True, True]  # ps tasks serve until the job is stopped
    # The global step counts the steps applied. TF's coordinator runs a step at least once:
    # the one in flight on the killed worker may have been applied there and run again.
    final = json.loads(open(out).read())["global_step"]
    assert MAX_STEPS <= final <= MAX_STEPS + 1
    assert make_estimator(model_dir).get_variable_value("global_step") == final
    # Checkpoints every 10 steps, counted exactly although 2 workers run steps concurrently.
    saves = sorted({int(n) for n in re.findall(r"Saving checkpoints for (\d+) into", chief_log)})
    assert saves[:2] == [0, 10] and saves[-1] == final
    # A re-run step moves the cadence by one (a gap of 11, once); the final save comes at
    # max_steps, however far after the last periodic one (9 after such a shift).
    gaps = [b - a for a, b in zip(saves, saves[1:])]
    periodic, last = gaps[:-1], gaps[-1]
    assert all(gap in (10, 11) for gap in periodic) and gaps.count(11) <= 1, saves
    assert 1 <= last <= 11, saves
