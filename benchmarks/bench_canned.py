"""Steps/s of a canned DNNClassifier over feature columns (keras_estimator) vs the same
model hand-written in Keras 3 with preprocessing layers, and optionally vs the original
tf.estimator 2.15 DNNClassifier.

The data is a synthetic census-like table (two numeric columns, a 5-word categorical
column, a 1000-value hashed one), batch 128. The model: normalized numerics, a one-hot of
the categorical, an 8-d embedding of the hashed column, hidden units [64, 32], Adagrad
(lr 0.05), binary labels. Runs alternate between the implementations; each warms up
(tracing), then times `--steps` steps. The machine is shared and noisy: read the ratios.

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

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

LEGACY_WORKER = "--worker" in sys.argv
if LEGACY_WORKER:  # TF 2.15: the original tf.estimator
    estimator = tf.estimator
    keras = None
else:
    import keras

    import keras_estimator as estimator

BATCH = 128
WARMUP = 100
WORDS = ["Bachelors", "HS-grad", "Masters", "Doctorate", "Some-college"]


def census_like(n: int = 20000, seed: int = 0) -> tuple[dict, np.ndarray]:
    rng = np.random.RandomState(seed)
    features = {
        "age": rng.randint(18, 80, n).astype(np.float32),
        "hours": rng.randint(10, 70, n).astype(np.float32),
        "education": rng.choice(WORDS, n),
        "occupation": np.array([f"occ_{i}" for i in rng.randint(0, 1000, n)]),
    }
    score = (features["age"] - 45) / 15 + np.isin(features["education"], WORDS[2:4]) * 1.5
    return features, (score + rng.randn(n) * 0.5 > 0.5).astype(np.int64)


def dataset(features: dict, labels: np.ndarray) -> tf.data.Dataset:
    data = tf.data.Dataset.from_tensor_slices((features, labels))
    return data.shuffle(5000, seed=1).repeat().batch(BATCH).prefetch(2)


def feature_columns() -> list:
    fc = tf.feature_column
    return [
        fc.numeric_column("age", normalizer_fn=lambda v: (v - 49.0) / 18.0),
        fc.numeric_column("hours", normalizer_fn=lambda v: (v - 40.0) / 17.0),
        fc.indicator_column(fc.categorical_column_with_vocabulary_list("education", WORDS)),
        fc.embedding_column(fc.categorical_column_with_hash_bucket("occupation", 1000), 8),
    ]


def adagrad() -> object:
    if LEGACY_WORKER:
        return tf.keras.optimizers.legacy.Adagrad(0.05)
    return keras.optimizers.Adagrad(0.05)


def run_estimator(features: dict, labels: np.ndarray, steps: int) -> float:
    with tempfile.TemporaryDirectory() as model_dir:
        est = estimator.DNNClassifier(
            hidden_units=[64, 32],
            feature_columns=feature_columns(),
            model_dir=model_dir,
            optimizer=adagrad,
            config=estimator.RunConfig(tf_random_seed=1),
        )
        est.train(lambda: dataset(features, labels), steps=WARMUP)
        start = time.perf_counter()
        est.train(lambda: dataset(features, labels), steps=steps)
        return steps / (time.perf_counter() - start)


def keras_model() -> object:
    inputs = {
        "age": keras.Input((1,), name="age"),
        "hours": keras.Input((1,), name="hours"),
        "education": keras.Input((1,), dtype="string", name="education"),
        "occupation": keras.Input((1,), dtype="string", name="occupation"),
    }
    age = keras.layers.Normalization(mean=49.0, variance=18.0**2)(inputs["age"])
    hours = keras.layers.Normalization(mean=40.0, variance=17.0**2)(inputs["hours"])
    education = keras.layers.StringLookup(
        vocabulary=WORDS, num_oov_indices=0, output_mode="one_hot"
    )(inputs["education"])
    occupation = keras.layers.Hashing(1000)(inputs["occupation"])
    occupation = keras.layers.Flatten()(keras.layers.Embedding(1000, 8)(occupation))
    net = keras.layers.Concatenate()([age, hours, education, occupation])
    net = keras.layers.Dense(64, activation="relu")(net)
    net = keras.layers.Dense(32, activation="relu")(net)
    model = keras.Model(inputs, keras.layers.Dense(1)(net))
    model.compile(optimizer=adagrad(), loss=keras.losses.BinaryCrossentropy(from_logits=True))
    return model


def run_keras(features: dict, labels: np.ndarray, steps: int) -> float:
    model = keras_model()
    columns = {k: v[:, None] for k, v in features.items()}
    data = dataset(columns, labels)
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
