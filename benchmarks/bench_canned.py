"""Steps/s of a canned DNNClassifier over feature columns (keras_estimator) vs the same
model hand-written in Keras 3 with preprocessing layers, and optionally vs the original
tf.estimator 2.15 DNNClassifier.

The data is a synthetic census-like table (two numeric columns, a 5-word categorical
column, a 1000-value hashed one), batch 128. The model: normalized numerics, a one-hot of
the categorical, an 8-d embedding of the hashed column, hidden units [64, 32], Adagrad
(lr 0.05), binary labels. Runs alternate between the implementations; each warms up
(tracing), then times `--steps` steps. The machine is shared and noisy: read the ratios.
The models are speed_workloads.py's canned_dnn (bench_speed_table.py measures them with
every other figure: first step, evaluation, prediction, memory).

    python benchmarks/bench_canned.py --steps 2000 --reps 3
    python benchmarks/bench_canned.py --legacy-python ~/.venvs/ke-legacy/bin/python
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

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from speed_workloads import (  # noqa: E402
    canned_dataset,
    census_columns,
    census_like,
    dnn_classifier,
    keras,
    keras_census_model,
)

WARMUP = 100


def run_estimator(features: dict, labels: np.ndarray, steps: int) -> float:
    with tempfile.TemporaryDirectory() as model_dir:
        est = dnn_classifier(model_dir)
        est.train(lambda: canned_dataset(features, labels), steps=WARMUP)
        start = time.perf_counter()
        est.train(lambda: canned_dataset(features, labels), steps=steps)
        return steps / (time.perf_counter() - start)


def run_keras(features: dict, labels: np.ndarray, steps: int) -> float:
    model = keras_census_model()
    data = canned_dataset(census_columns(features), labels)
    model.fit(data, epochs=1, steps_per_epoch=WARMUP, verbose=0)
    start = time.perf_counter()
    model.fit(data, epochs=1, steps_per_epoch=steps, verbose=0)
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
    features, labels = census_like()
    if args.worker:
        tf.get_logger().setLevel("ERROR")
        print(run_estimator(features, labels, args.steps))
        return
    print(f"TensorFlow {tf.__version__}, Keras {keras.__version__}, {args.steps} timed steps")
    runs: dict[str, list[float]] = {"est": [], "keras": [], "legacy": []}
    for rep in range(args.reps):
        order = [("est", lambda: run_estimator(features, labels, args.steps)),
                 ("keras", lambda: run_keras(features, labels, args.steps))]  # fmt: skip
        if args.legacy_python:
            order.append(("legacy", lambda: run_legacy(args.legacy_python, args.steps)))
        order = order[rep % len(order) :] + order[: rep % len(order)]
        for label, fn in order:
            runs[label].append(fn())
            print(f"  rep {rep} {label:6s} {runs[label][-1]:7.0f} steps/s", flush=True)
    est, ker = statistics.median(runs["est"]), statistics.median(runs["keras"])
    print(f"canned DNNClassifier: keras_estimator {est:.0f} steps/s, Keras 3 {ker:.0f} steps/s, "
          f"ratio {est / ker:.2f}x")  # fmt: skip
    if runs["legacy"]:
        legacy = statistics.median(runs["legacy"])
        print(f"  tf.estimator 2.15 {legacy:.0f} steps/s; keras_estimator / tf.estimator "
              f"{est / legacy:.2f}x")  # fmt: skip


if __name__ == "__main__":
    main()
