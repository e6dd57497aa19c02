"""Steps/s of a TF1 queue-based input_fn (slice_input_producer + shuffle_batch, run in its
own graph and session by keras_estimator) against the same data through tf.data, on the
MLP of bench_core.py; optionally the queue input_fn on the original tf.estimator 2.15.

Runs alternate; read the paired ratios (the machine is shared and noisy).

    python benchmarks/bench_queue_input.py --steps 2000 --reps 3
    python benchmarks/bench_queue_input.py --legacy-python ~/.venvs/ke-legacy/bin/python
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import tensorflow as tf  # noqa: E402
from bench_core import BATCH, WARMUP, _ratio, estimator, load_digits, mlp_model_fn  # noqa: E402

v1 = tf.compat.v1


def queue_input_fn(x, y):
    def input_fn():
        example = v1.train.slice_input_producer([tf.constant(x), tf.constant(y)], shuffle=True)
        features, labels = v1.train.shuffle_batch(
            example, BATCH, capacity=4 * BATCH + 2000, min_after_dequeue=2000, num_threads=2
        )
        return {"x": features}, labels

    return input_fn


def dataset_input_fn(x, y):
    def input_fn():
        ds = tf.data.Dataset.from_tensor_slices(({"x": x}, y))
        return ds.shuffle(2000).repeat().batch(BATCH)

    return input_fn


def steps_per_second(input_fn, steps: int) -> float:
    with tempfile.TemporaryDirectory() as model_dir:
        config = estimator.RunConfig(model_dir=model_dir, tf_random_seed=1)
        est = estimator.Estimator(mlp_model_fn, config=config, params={})
        est.train(input_fn, steps=WARMUP)
        start = time.perf_counter()
        est.train(input_fn, steps=steps)
        return steps / (time.perf_counter() - start)


def run_legacy(python: str, steps: int) -> float:
    out = subprocess.run(
        [python, __file__, "--worker", "legacy", "--steps", str(steps)],
        capture_output=True,
        text=True,
        check=True,
        env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"),
    ).stdout
    return float(out.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--legacy-python", default=None, help="interpreter with TF 2.15")
    parser.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    x, y = load_digits()
    if args.worker == "legacy":
        tf.get_logger().setLevel("ERROR")
        print(steps_per_second(queue_input_fn(x, y), args.steps))
        return
    print(f"TensorFlow {tf.__version__}, {args.steps} timed steps, MLP on the digits")
    runs: dict[str, list[float]] = {"queue": [], "data": [], "legacy": []}
    for rep in range(args.reps):
        order = [
            ("queue", lambda: steps_per_second(queue_input_fn(x, y), args.steps)),
            ("data", lambda: steps_per_second(dataset_input_fn(x, y), args.steps)),
        ]
        if args.legacy_python:
            order.append(("legacy", lambda: run_legacy(args.legacy_python, args.steps)))
        order = order[rep % len(order) :] + order[: rep % len(order)]
        for label, run in order:
            runs[label].append(run())
    line = [
        f"queue input_fn {statistics.median(runs['queue']):6.0f} steps/s",
        f"tf.data input_fn {statistics.median(runs['data']):6.0f}",
        "queue vs tf.data " + _ratio(runs["queue"], runs["data"]),
    ]
    if runs["legacy"]:
        line += [
            f"tf.estimator 2.15 queue input_fn {statistics.median(runs['legacy']):6.0f}",
            "vs tf.estimator " + _ratio(runs["queue"], runs["legacy"]),
        ]
    print(" | ".join(line))


if __name__ == "__main__":
    main()
