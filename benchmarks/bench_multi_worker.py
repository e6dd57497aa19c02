"""Multi-worker training speed: 2 worker processes on 127.0.0.1 under
MultiWorkerMirroredStrategy vs one process, for keras_estimator and (with
`--legacy-python`) tf.estimator 2.15 running the very same model_fn.

Each job trains an MLP (2 x 256, Adam) on random data with per-replica batches of 64 for
2 x `--steps` steps, checkpointing every `--steps`; the steps between the two checkpoints
are timed (after tracing and connecting the cluster). One process trains with
`Estimator.train`, a multi-worker job with `train_and_evaluate` (tf.estimator 2.15 trains
one only through it; there the median of its own global_step/sec lines is read, as it
does not call the TrainSpec's saving listener). Examples/s counts every replica's batch. The machine
may be shared and noisy: read the ratios within a run.

    python benchmarks/bench_multi_worker.py --steps 1000
    python benchmarks/bench_multi_worker.py --legacy-python /tmp/venv215/bin/python

`--legacy-python` names an interpreter with tensorflow==2.15.1 and tensorflow-estimator
2.15.0; the jobs of the legacy column run this script there (`--impl legacy`).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time

BATCH = 64


def _free_ports(n: int) -> list[str]:
    sockets = [socket.socket() for _ in range(n)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [str(s.getsockname()[1]) for s in sockets]
    for s in sockets:
        s.close()
    return ports


def run_task(args: argparse.Namespace) -> None:
    """One process of a job: trains and writes {"seconds": ..., "steps": ...} to --out."""
    if args.ports:
        ports = args.ports.split(",")
        cluster = {"chief": [f"127.0.0.1:{ports[0]}"]}
        cluster["worker"] = [f"127.0.0.1:{p}" for p in ports[1:]]
        task = {"type": "chief", "index": 0} if args.index == 0 else {"type": "worker"}
        task.setdefault("index", args.index - 1)
        os.environ["TF_CONFIG"] = json.dumps({"cluster": cluster, "task": task})
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import numpy as np
    import tensorflow as tf

    strategy = tf.distribute.MultiWorkerMirroredStrategy() if args.ports else None
    if args.impl == "legacy":
        estimator = tf.compat.v1.estimator
    else:
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
        import keras_estimator as estimator
    v1 = tf.compat.v1
    legacy_cluster = args.impl == "legacy" and bool(args.ports)
    if legacy_cluster:
        v1.logging.set_verbosity(v1.logging.INFO)

    def model_fn(features, labels, mode):
        net = features["x"]
        for units in (256, 256):
            net = v1.layers.dense(net, units, activation=v1.nn.relu)
        logits = v1.layers.dense(net, 10)
        loss = v1.losses.sparse_softmax_cross_entropy(labels, logits)
        train_op = v1.train.AdamOptimizer(1e-3).minimize(loss, v1.train.get_global_step())
        return estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

    rng = np.random.RandomState(0)
    x = rng.randn(4096, 64).astype("float32")
    y = rng.randint(0, 10, 4096).astype("int64")

    def input_fn():
        dataset = tf.data.Dataset.from_tensor_slices(({"x": x}, y)).repeat()
        return dataset.batch(BATCH, drop_remainder=True).prefetch(2)

    def mark(times, step):
        """Notes when `step` was reached; at the second mark writes the timing to --out
        (from here: tf.estimator 2.15's multi-worker job runs copies of the listeners)."""
        times[step] = time.perf_counter()
        if {args.steps, 2 * args.steps} <= set(times):
            seconds = times[2 * args.steps] - times[args.steps]
            with open(args.out, "w") as f:
                json.dump({"seconds": seconds, "steps": args.steps}, f)

    class Timer(v1.train.CheckpointSaverListener):
        """Times the steps between the checkpoints at `steps` and `2 * steps`."""

        def __init__(self):
            self.times = {}

        def after_save(self, session, global_step_value):
            mark(self.times, int(global_step_value))

    config = estimator.RunConfig(
        model_dir=args.model_dir,
        train_distribute=strategy,
        save_checkpoints_steps=args.steps,
        save_summary_steps=10**9,
        # tf.estimator 2.15's multi-worker job: its own global_step/sec lines (it does not
        # call the TrainSpec's listener), every 100 steps.
        log_step_count_steps=100 if legacy_cluster else 10**9,
    )
    est = estimator.Estimator(model_fn, config=config)
    timer = Timer()
    if args.ports:  # tf.estimator 2.15 trains a multi-worker job only through this
        estimator.train_and_evaluate(
            est,
            estimator.TrainSpec(
                input_fn,
                max_steps=2 * args.steps,
                saving_listeners=[timer],
            ),
            estimator.EvalSpec(input_fn, steps=1),
        )
    else:
        est.train(input_fn, max_steps=2 * args.steps, saving_listeners=[timer])


def run_job(python: str, impl: str, workers: int, args: argparse.Namespace) -> dict:
    """Starts the job's processes and returns the chief's (index 0) timing."""
    tmp = tempfile.mkdtemp(prefix=f"bench_mw_{impl}_{workers}_")
    ports = ",".join(_free_ports(workers)) if workers > 1 else ""
    outs = [os.path.join(tmp, f"{i}.json") for i in range(workers)]
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    env.pop("TF_CONFIG", None)
    procs = [
        subprocess.Popen(
            [
                python,
                os.path.abspath(__file__),
                "--task",
                "--impl",
                impl,
                "--index",
                str(i),
                "--ports",
                ports,
                "--model-dir",
                os.path.join(tmp, "model"),
                "--out",
                outs[i],
                "--steps",
                str(args.steps),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=env,
        )  # fmt: skip
        for i in range(workers)
    ]
    try:
        logs = [p.communicate(timeout=3600)[0] for p in procs]
    finally:
        for p in procs:
            p.kill()
    for p, log in zip(procs, logs):
        if p.returncode != 0:
            raise RuntimeError(f"{impl} x{workers} failed:\n{log[-3000:]}")
    written = [out for out in outs if os.path.exists(out)]
    if written:
        with open(written[0]) as f:
            result = json.load(f)
        result["steps_per_sec"] = result["steps"] / result["seconds"]
    else:  # the chief's global_step/sec lines, after the first (tracing, connecting)
        rates = [float(r) for r in re.findall(r"global_step/sec: ([0-9.]+)", logs[0])][1:]
        if not rates:
            raise RuntimeError(f"{impl} x{workers}: no timing:\n{logs[0][-3000:]}")
        result = {"steps_per_sec": statistics.median(rates)}
    result["examples_per_sec"] = result["steps_per_sec"] * BATCH * workers
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=500)
    parser.add_argument("--legacy-python", default=None)
    parser.add_argument("--legacy-only", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--task", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--impl", default="ke", help=argparse.SUPPRESS)
    parser.add_argument("--index", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--ports", default="", help=argparse.SUPPRESS)
    parser.add_argument("--model-dir", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--out", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.task:
        run_task(args)
        return
    jobs = [] if args.legacy_only else [(sys.executable, "keras_estimator", "ke")]
    if args.legacy_python:
        jobs.append((args.legacy_python, "tf.estimator 2.15", "legacy"))
    print(f"{args.steps} timed steps, per-replica batch {BATCH}, MLP 64-256-256-10, Adam")
    print(f"{'implementation':<20}{'job':<22}{'steps/s':>10}{'examples/s':>12}")
    for python, label, impl in jobs:
        for workers in (1, 2):
            r = run_job(python, impl, workers, args)
            job = "1 process" if workers == 1 else "chief + worker (MWMS)"
            print(f"{label:<20}{job:<22}{r['steps_per_sec']:>10.1f}{r['examples_per_sec']:>12.0f}",
                  flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
