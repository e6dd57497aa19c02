"""Steps/s of keras_estimator (TF1-style model_fn) vs hand-written idiomatic Keras 3,
and optionally vs the original tf.estimator 2.15 running the very same model_fn.

Workloads on the bundled 8x8 digits, batch 64: an MLP (2 x 256, dropout, Adam), a small
CNN (conv32-pool-conv64-pool-dense128, SGD), and the MLP with a LoggingTensorHook in its
training_hooks (every 100 iterations, as legacy scripts had; the Keras column has none).
Runs alternate between the implementations; each run warms up (tracing) and then times
`--steps` training steps. The models are speed_workloads.py's (bench_speed_table.py
measures them with every other figure: first step, evaluation, prediction, memory).
The machine is shared and noisy: read the paired ratios, not the absolute figures.

    python benchmarks/bench_core.py --steps 3000 --reps 3
    python benchmarks/bench_core.py --legacy-python ~/.venvs/ke-legacy/bin/python

`--legacy-python` names an interpreter with tensorflow==2.15.1 and tensorflow-estimator
2.15.0; this script then re-runs itself there (`--worker legacy`) for the third column.
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
    DIGITS_BATCH,
    array_dataset,
    cnn_model_fn,
    estimator,
    keras,
    keras_cnn,
    keras_mlp,
    load_digits,
    mlp_logging_hook_model_fn,
    mlp_model_fn,
)

BATCH = DIGITS_BATCH
WARMUP = 200

# name: (model_fn, Keras 3 model, the Keras model's input shape)
WORKLOADS = {
    "mlp": (mlp_model_fn, keras_mlp, (64,)),
    "cnn": (cnn_model_fn, keras_cnn, (8, 8, 1)),
    "mlp_hook": (mlp_logging_hook_model_fn, keras_mlp, (64,)),
}


def run_legacy(python: str, name: str, steps: int) -> float:
    """Runs this script under TF 2.15 with the original tf.estimator; returns steps/s."""
    out = subprocess.run(
        [python, __file__, "--worker", "legacy", "--workloads", name, "--steps", str(steps)],
        capture_output=True,
        text=True,
        check=True,
        env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"),
    ).stdout
    return float(out.strip().splitlines()[-1])


def run_estimator(name: str, x: np.ndarray, y: np.ndarray, steps: int) -> float:
    model_fn, _, _ = WORKLOADS[name]
    key = "image" if name == "cnn" else "x"

    def input_fn():
        return array_dataset({key: x}, y, batch=BATCH, training=True, shuffle=2000)

    with tempfile.TemporaryDirectory() as model_dir:
        config = estimator.RunConfig(model_dir=model_dir, tf_random_seed=1)
        est = estimator.Estimator(model_fn, config=config, params={})
        est.train(input_fn, steps=WARMUP)
        start = time.perf_counter()
        est.train(input_fn, steps=steps)
        return steps / (time.perf_counter() - start)


def run_keras(name: str, x: np.ndarray, y: np.ndarray, steps: int) -> float:
    _, build, shape = WORKLOADS[name]
    model = build()
    dataset = array_dataset(x.reshape(-1, *shape), y, batch=BATCH, training=True, shuffle=2000)
    model.fit(dataset, epochs=1, steps_per_epoch=WARMUP, verbose=0, shuffle=False)
    start = time.perf_counter()
    model.fit(dataset, epochs=1, steps_per_epoch=steps, verbose=0, shuffle=False)
    return steps / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--workloads", default="mlp,cnn,mlp_hook")
    parser.add_argument("--legacy-python", default=None, help="interpreter with TF 2.15")
    parser.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    x, y = load_digits()
    if args.worker == "legacy":
        tf.get_logger().setLevel("ERROR")
        print(run_estimator(args.workloads, x, y, args.steps))
        return
    print(f"TensorFlow {tf.__version__}, Keras {keras.__version__}, {args.steps} timed steps")
    for name in args.workloads.split(","):
        runs: dict[str, list[float]] = {"est": [], "keras": [], "legacy": []}
        for rep in range(args.reps):
            order = [
                ("est", run_estimator, (name, x, y, args.steps)),
                ("keras", run_keras, (name, x, y, args.steps)),
            ]
            if args.legacy_python:
                order.append(("legacy", run_legacy, (args.legacy_python, name, args.steps)))
            order = order[rep % len(order) :] + order[: rep % len(order)]
            for label, fn, fn_args in order:
                runs[label].append(fn(*fn_args))
        line = [
            f"{name:4s} keras_estimator {statistics.median(runs['est']):7.0f} steps/s",
            f"hand-written Keras {statistics.median(runs['keras']):7.0f}",
            "vs Keras " + _ratio(runs["est"], runs["keras"]),
        ]
        if runs["legacy"]:
            line += [
                f"tf.estimator 2.15 {statistics.median(runs['legacy']):7.0f}",
                "vs tf.estimator " + _ratio(runs["est"], runs["legacy"]),
            ]
        print(" | ".join(line))


def _ratio(ours: list[float], theirs: list[float]) -> str:
    ratios = [a / b for a, b in zip(ours, theirs)]
    detail = ", ".join(f"{r:.2f}" for r in ratios)
    return f"{statistics.median(ratios):.2f}x [{detail}]"


if __name__ == "__main__":
    main()
