"""Steps/s of keras_estimator (TF1-style model_fn) vs hand-written idiomatic Keras 3.

Two workloads on the bundled 8x8 digits: an MLP (2 x 256, dropout, Adam) and a small CNN
(conv32-pool-conv64-pool-dense128, SGD), batch 64. Runs alternate between the two
implementations; each run warms up (tracing) and then times `--steps` training steps.
The machine is shared and noisy: read the paired ratios, not the absolute figures.

    python benchmarks/bench_core.py --steps 3000 --reps 3
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

import keras_estimator as estimator  # noqa: E402
from keras_estimator.demo import load_digits  # noqa: E402

v1 = tf.compat.v1
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


def keras_mlp() -> keras.Model:
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


def keras_cnn() -> keras.Model:
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


WORKLOADS = {"mlp": (mlp_model_fn, keras_mlp), "cnn": (cnn_model_fn, keras_cnn)}


def run_estimator(name: str, x: np.ndarray, y: np.ndarray, steps: int) -> float:
    model_fn, _ = WORKLOADS[name]

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).shuffle(2000).repeat().batch(BATCH)

    with tempfile.TemporaryDirectory() as model_dir:
        est = estimator.Estimator(model_fn, model_dir=model_dir, params={})
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
    parser.add_argument("--workloads", default="mlp,cnn")
    args = parser.parse_args()
    x, y, _, _ = load_digits()
    print(f"TensorFlow {tf.__version__}, Keras {keras.__version__}, {args.steps} timed steps")
    for name in args.workloads.split(","):
        ours, theirs = [], []
        for rep in range(args.reps):
            order = [("est", run_estimator), ("keras", run_keras)]
            if rep % 2:
                order.reverse()
            for label, fn in order:
                (ours if label == "est" else theirs).append(fn(name, x, y, args.steps))
        ratios = [a / b for a, b in zip(ours, theirs)]
        print(
            f"{name:4s} keras_estimator {statistics.median(ours):8.0f} steps/s | "
            f"hand-written Keras {statistics.median(theirs):8.0f} steps/s | "
            f"ratio (median of paired) {statistics.median(ratios):.2f}x "
            f"[{', '.join(f'{r:.2f}' for r in ratios)}]"
        )


if __name__ == "__main__":
    main()
