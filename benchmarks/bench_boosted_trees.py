"""BoostedTreesClassifier / BoostedTreesRegressor vs scikit-learn's HistGradientBoosting.

Quality and training time on two non-linear synthetic tables with the same number of
trees, depth and learning rate: Hastie et al.'s 10-feature classification task
(`make_hastie_10_2`: label = sum(x_i^2) > 9.34) and Friedman #1 regression
(`make_friedman1`: 10 features, 5 informative, noise 1.0). keras_estimator sees the whole
training set as one batch (`n_batches_per_layer=1`, tf.estimator 2.8's in-memory style),
numeric columns with quantile_sketch_epsilon=0.01 (100 buckets); HistGradientBoosting runs
with `max_leaf_nodes=None` (depth is the only size limit, as here), no early stopping and
its other defaults (255 bins, min_samples_leaf=20). Needs scikit-learn
(`pip install scikit-learn`); keras_estimator itself does not.

    python benchmarks/bench_boosted_trees.py --trees 100 --depth 6
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

try:
    from sklearn.datasets import make_friedman1, make_hastie_10_2
    from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
except ImportError:
    sys.exit("This benchmark compares with scikit-learn: pip install scikit-learn")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

import keras_estimator as estimator  # noqa: E402


def _input_fn(x: np.ndarray, y: np.ndarray, repeat: bool = True):
    def input_fn():
        features = {f"x{i}": x[:, i] for i in range(x.shape[1])}
        dataset = tf.data.Dataset.from_tensors((features, y))
        return dataset.repeat() if repeat else dataset

    return input_fn


def _columns(width: int) -> list:
    return [tf.feature_column.numeric_column(f"x{i}") for i in range(width)]


def _train(est, x, y) -> float:
    start = time.perf_counter()
    est.train(_input_fn(x, y))
    return time.perf_counter() - start


def classification(n_train: int, n_test: int, trees: int, depth: int, seed: int) -> dict:
    x, y = make_hastie_10_2(n_samples=n_train + n_test, random_state=seed)
    x, y = x.astype("float32"), (y > 0).astype("int32")
    x_train, y_train, x_test, y_test = x[:n_train], y[:n_train], x[n_train:], y[n_train:]
    with tempfile.TemporaryDirectory() as model_dir:
        est = estimator.BoostedTreesClassifier(
            _columns(10),
            n_batches_per_layer=1,
            model_dir=model_dir,
            n_trees=trees,
            max_depth=depth,
            learning_rate=0.1,
            center_bias=True,
        )
        seconds = _train(est, x_train, y_train)
        ours = est.evaluate(_input_fn(x_test, y_test), steps=1)["accuracy"]
        importances = est.experimental_feature_importances(normalize=True)
    hist = HistGradientBoostingClassifier(
        max_iter=trees,
        max_depth=depth,
        learning_rate=0.1,
        max_leaf_nodes=None,
        early_stopping=False,
        random_state=seed,
    )
    start = time.perf_counter()
    hist.fit(x_train, y_train)
    hist_seconds = time.perf_counter() - start
    theirs = float((hist.predict(x_test) == y_test).mean())
    return {
        "ours": float(ours),
        "theirs": theirs,
        "seconds": seconds,
        "hist_seconds": hist_seconds,
        "importances": importances,
    }


def regression(n_train: int, n_test: int, trees: int, depth: int, seed: int) -> dict:
    x, y = make_friedman1(n_samples=n_train + n_test, noise=1.0, random_state=seed)
    x, y = x.astype("float32"), y.astype("float32")
    x_train, y_train, x_test, y_test = x[:n_train], y[:n_train], x[n_train:], y[n_train:]
    with tempfile.TemporaryDirectory() as model_dir:
        est = estimator.BoostedTreesRegressor(
            _columns(10),
            n_batches_per_layer=1,
            model_dir=model_dir,
            n_trees=trees,
            max_depth=depth,
            learning_rate=0.1,
            center_bias=True,
        )
        seconds = _train(est, x_train, y_train)
        batches = est.predict(_input_fn(x_test, y_test, repeat=False), yield_single_examples=False)
        predictions = np.concatenate([batch["predictions"] for batch in batches])
        ours = float(np.sqrt(np.mean((predictions[:, 0] - y_test) ** 2)))
        importances = est.experimental_feature_importances(normalize=True)
    hist = HistGradientBoostingRegressor(
        max_iter=trees,
        max_depth=depth,
        learning_rate=0.1,
        max_leaf_nodes=None,
        early_stopping=False,
        random_state=seed,
    )
    start = time.perf_counter()
    hist.fit(x_train, y_train)
    hist_seconds = time.perf_counter() - start
    theirs = float(np.sqrt(np.mean((hist.predict(x_test) - y_test) ** 2)))
    return {
        "ours": ours,
        "theirs": theirs,
        "seconds": seconds,
        "hist_seconds": hist_seconds,
        "importances": importances,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train", type=int, default=8000)
    parser.add_argument("--test", type=int, default=4000)
    parser.add_argument("--trees", type=int, default=100)
    parser.add_argument("--depth", type=int, default=6)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    estimator.set_progress_bar(False)
    shape = f"{args.trees} trees, depth {args.depth}, {args.train} train / {args.test} test"
    c = classification(args.train, args.test, args.trees, args.depth, args.seed)
    print(f"classification (hastie_10_2, {shape})")
    print(
        f"  accuracy: BoostedTreesClassifier {c['ours']:.4f}, HistGradientBoosting "
        f"{c['theirs']:.4f}, ratio {c['ours'] / c['theirs']:.3f} (done when >= 0.98)"
    )
    print(f"  training s: {c['seconds']:.1f} vs {c['hist_seconds']:.2f}")
    print(f"  importances: {dict((k, round(v, 3)) for k, v in c['importances'].items())}")
    r = regression(args.train, args.test, args.trees, args.depth, args.seed)
    print(f"regression (friedman1, noise 1.0, {shape})")
    print(
        f"  RMSE: BoostedTreesRegressor {r['ours']:.4f}, HistGradientBoosting "
        f"{r['theirs']:.4f}, ratio {r['ours'] / r['theirs']:.3f} (done when <= 1.05)"
    )
    print(f"  training s: {r['seconds']:.1f} vs {r['hist_seconds']:.2f}")
    print(f"  importances: {dict((k, round(v, 3)) for k, v in r['importances'].items())}")


if __name__ == "__main__":
    main()
