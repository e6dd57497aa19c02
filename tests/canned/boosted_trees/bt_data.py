"""Small non-linear tables for the BoostedTrees tests: x0, x1 informative, x2, x3 noise."""

import numpy as np
import tensorflow as tf

N_TRAIN, N_TEST, BATCH = 1200, 600, 600
BOUNDARIES = [float(b) for b in np.linspace(-1, 1, 21)[1:-1]]


def table(seed, n):
    """x0, x1 informative (an XOR of their signs; a sine and a square), x2, x3 noise."""
    rng = np.random.RandomState(seed)
    x = rng.uniform(-1, 1, (n, 4)).astype("float32")
    label = ((x[:, 0] > 0) ^ (x[:, 1] > 0)).astype("int32")
    target = (np.sin(3 * x[:, 0]) + x[:, 1] ** 2 + rng.normal(0, 0.1, n)).astype("float32")
    return x, label, target


def features(x):
    return {f"x{i}": x[:, i] for i in range(x.shape[1])}


def columns():
    """x1 bucketized (its importance key is `x1_bucketized`), the others numeric."""
    numeric = tf.feature_column.numeric_column
    return [numeric("x0"), tf.feature_column.bucketized_column(numeric("x1"), BOUNDARIES),
            numeric("x2"), numeric("x3")]  # fmt: skip


def train_input(x, y, batch=BATCH):
    return lambda: tf.data.Dataset.from_tensor_slices((features(x), y)).batch(batch).repeat()


def eval_input(x, y, batch=BATCH):
    return lambda: tf.data.Dataset.from_tensor_slices((features(x), y)).batch(batch)


def predict_input(x, batch=BATCH):
    return lambda: tf.data.Dataset.from_tensor_slices(features(x)).batch(batch)
