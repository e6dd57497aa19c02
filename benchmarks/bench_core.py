"""Steps/s of keras_estimator (TF1-style model_fn) vs hand-written idiomatic Keras 3,
and optionally vs the original tf.estimator 2.15 running the very same model_fn.

Workloads on the bundled 8x8 digits, batch 64: an MLP (2 x 256, dropout, Adam), a small
CNN (conv32-pool-conv64-pool-dense128, SGD), and the MLP with a LoggingTensorHook in its
training_hooks (every 100 iterations, as legacy scripts had; the Keras column has none).
Runs alternate between the implementations; each run warms up (tracing) and then times
`--steps` training steps.
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
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import subprocess  # noqa: E402
import sys  # noqa: E402

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

LEGACY_WORKER = "--worker" in sys.argv and "legacy" in sys.argv
if LEGACY_WORKER:  # TF 2.15: the original tf.estimator, the same model_fns below
    estimator = tf.compat.v1.estimator
    keras = None
else:
    import keras

    import keras_estimator as estimator

v1 = tf.compat.v1
DIGITS = os.path.join(os.path.dirname(__file__), "..", "keras_estimator", "demo", "digits.npz")


def load_digits() -> tuple[np.ndarray, np.ndarray]:
    with np.load(DIGITS) as data:
        x = data["images"].reshape(-1, 64).astype(np.float32) / 16.0
        return x, data["labels"].astype(np.int64)


BATCH = 64
WARMUP = 200


def mlp_model_fn(features, labels, mode, params):
    net = features["x"]
    for units in (256, 256):
        net = v1.layers.dense(net, units, activation=tf.nn.relu)
        net = v1.layers.dropout(net, 0.2, training=mode == estimator.ModeKeys.TRAIN)
    logits = v1.layers.dense(net, 10)
    loss = v1.losses.sparse_softmax_cross_entropy(labels, logits)
    train_op = v1.train.AdamOptimizer(1e-3).minimize(loss, v1.train.get_global_step())
    return estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def cnn_model_fn(features, labels, mode, params):
    net = tf.reshape(features["x"], [-1, 8, 8, 1])
    net = v1.layers.conv2d(net, 32, 3, padding="same", activation=tf.nn.relu)
    net = v1.layers.max_pooling2d(net, 2, 2)
    net = v1.layers.conv2d(net, 64, 3, padding="same", activation=tf.nn.relu)
    net = v1.layers.max_pooling2d(net, 2, 2)
    net = v1.layers.flatten(net)
    net = v1.layers.dense(net, 128, activation=tf.nn.relu)
    logits = v1.layers.dense(net, 10)
    loss = v1.losses.sparse_softmax_cross_entropy(labels, logits)
    train_op = v1.train.GradientDescentOptimizer(0.05).minimize(loss, v1.train.get_global_step())
    return estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def keras_mlp() -> object:
    model = keras.Sequential(
        [
            keras.Input((64,)),
            keras.layers.Dense(256, activation="relu"),
            keras.layers.Dropout(0.2),
            keras.layers.Dense(256, activation="relu"),
            keras.layers.Dropout(0.2),
            keras.layers.Dense(10),
        ]
    )
    model.compile(
        optimizer=keras.optimizers.Adam(1e-3),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    )
    return model


def keras_cnn() -> object:
    model = keras.Sequential(
        [
            keras.Input((64,)),
            keras.layers.Reshape((8, 8, 1)),
            keras.layers.Conv2D(32, 3, padding="same", activation="relu"),
            keras.layers.MaxPooling2D(2),
            keras.layers.Conv2D(64, 3, padding="same", activation="relu"),
            keras.layers.MaxPooling2D(2),
            keras.layers.Flatten(),
            keras.layers.Dense(128, activation="relu"),
            keras.layers.Dense(10),
        ]
    )
    model.compile(
        optimizer=keras.optimizers.SGD(0.05),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    )
    return model


def mlp_logging_hook_model_fn(features, labels, mode, params):
    """The MLP with the LoggingTensorHook legacy scripts attach (every 100 iterations)."""
    spec = mlp_model_fn(features, labels, mode, params)
    hook = estimator.LoggingTensorHook({"loss": spec.loss}, every_n_iter=100)
    return spec._replace(training_hooks=[hook])


WORKLOADS = {
    "mlp": (mlp_model_fn, keras_mlp),
    "cnn": (cnn_model_fn, keras_cnn),
    "mlp_hook": (mlp_logging_hook_model_fn, keras_mlp),
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
    model_fn, _ = WORKLOADS[name]

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).shuffle(2000).repeat().batch(BATCH)

    with tempfile.TemporaryDirectory() as model_dir:
        config = estimator.RunConfig(model_dir=model_dir, tf_random_seed=1)
        est = estimator.Estimator(model_fn, config=config, params={})
        est.train(input_fn, steps=WARMUP)
        start = time.perf_counter()
        est.train(input_fn, steps=steps)
        return steps / (time.perf_counter() - start)


def run_keras(name: str, x: np.ndarray, y: np.ndarray, steps: int) -> float:
    _, build = WORKLOADS[name]
    model = build()
    dataset = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(2000).repeat().batch(BATCH)
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
