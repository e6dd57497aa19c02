"""The demo: a legacy TF1-style model_fn trained on the 8x8 digits that ship with the package.

The data is the UCI "Optical Recognition of Handwritten Digits" set as distributed with
scikit-learn (1797 images, 10 classes), stored in `digits.npz`; nothing is downloaded.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
import time
from typing import Any

import numpy as np

logger = logging.getLogger("keras_estimator")

_DATA = os.path.join(os.path.dirname(__file__), "digits.npz")


def load_digits() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Returns (x_train, y_train, x_test, y_test): float32 [n, 64] in [0, 1] and int64 labels.

    A fixed, seeded 80/20 split.
    """
    with np.load(_DATA) as data:
        images, labels = data["images"], data["labels"]
    x = images.reshape(len(images), 64).astype(np.float32) / 16.0
    y = labels.astype(np.int64)
    order = np.random.RandomState(0).permutation(len(y))
    test, train = order[: len(y) // 5], order[len(y) // 5 :]
    return x[train], y[train], x[test], y[test]


def digits_model_fn(features: Any, labels: Any, mode: str, params: dict) -> Any:
    """A classic tf.estimator model_fn: tf.layers, tf.losses, tf.metrics, AdamOptimizer."""
    import tensorflow.compat.v1 as tf

    import keras_estimator as estimator

    net = features["x"]
    for units in params["hidden_units"]:
        net = tf.layers.dense(net, units, activation=tf.nn.relu)
        net = tf.layers.dropout(net, 0.2, training=mode == estimator.ModeKeys.TRAIN)
    logits = tf.layers.dense(net, 10)
    classes = tf.argmax(logits, 1)
    if mode == estimator.ModeKeys.PREDICT:
        return estimator.EstimatorSpec(
            mode, predictions={"classes": classes, "probabilities": tf.nn.softmax(logits)}
        )
    loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
    if mode == estimator.ModeKeys.EVAL:
        metrics = {"accuracy": tf.metrics.accuracy(labels, classes)}
        return estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops=metrics)
    optimizer = tf.train.AdamOptimizer(params["learning_rate"])
    train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())
    return estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def run_demo(model_dir: str | None = None, steps: int = 2000) -> dict[str, Any]:
    """Trains, evaluates and predicts with `digits_model_fn`; returns a small report.

    Without `model_dir` it trains in a temporary folder, removed before returning (the
    report says so). With one, a re-run on a finished model_dir trains no steps and says so.
    """
    temporary = model_dir is None
    model_dir = model_dir or tempfile.mkdtemp(prefix="keras_estimator_demo_")
    try:
        report = _train_evaluate_predict(model_dir, steps)
    finally:
        if temporary:
            shutil.rmtree(model_dir, ignore_errors=True)
    report["removed"] = temporary
    return report


def _train_evaluate_predict(model_dir: str, steps: int) -> dict[str, Any]:
    import tensorflow.compat.v1 as tf

    import keras_estimator as estimator

    x_train, y_train, x_test, y_test = load_digits()

    def train_input_fn() -> Any:
        ds = tf.data.Dataset.from_tensor_slices(({"x": x_train}, y_train))
        return ds.shuffle(2000).repeat().batch(64)

    def eval_input_fn() -> Any:
        return tf.data.Dataset.from_tensor_slices(({"x": x_test}, y_test)).batch(128)

    def predict_input_fn() -> Any:
        return tf.data.Dataset.from_tensor_slices({"x": x_test[:8]}).batch(8)

    config = estimator.RunConfig(
        model_dir=model_dir, tf_random_seed=0, save_checkpoints_steps=500, log_step_count_steps=500
    )
    est = estimator.Estimator(
        digits_model_fn,
        config=config,
        params={"hidden_units": [128, 64], "learning_rate": 1e-3},
    )
    latest = est.latest_checkpoint()
    start_step = int(tf.train.load_variable(latest, "global_step")) if latest else 0
    start = time.perf_counter()
    est.train(train_input_fn, max_steps=steps)
    train_seconds = time.perf_counter() - start
    metrics = est.evaluate(eval_input_fn)
    trained = int(metrics["global_step"]) - start_step
    predictions = list(est.predict(predict_input_fn))
    return {
        "model_dir": model_dir,
        "start_step": start_step,
        "max_steps": steps,
        "trained_steps": trained,
        "train_seconds": train_seconds,
        "steps_per_second": trained / train_seconds if trained and train_seconds else None,
        "metrics": metrics,
        "predicted": [int(p["classes"]) for p in predictions],
        "actual": [int(y) for y in y_test[:8]],
        "checkpoint": est.latest_checkpoint(),
    }


def _training_line(report: dict[str, Any]) -> str:
    step, trained = int(report["metrics"]["global_step"]), report["trained_steps"]
    if not trained:
        return (f"skipped: model_dir is already at step {step} and --steps {report['max_steps']} "
                "is the step to train to; a larger --steps trains on")  # fmt: skip
    resumed = f", resumed from step {report['start_step']}" if report["start_step"] else ""
    return (f"{trained} steps in {report['train_seconds']:.1f} s "
            f"({report['steps_per_second']:.0f} steps/s){resumed}")  # fmt: skip


def format_report(report: dict[str, Any]) -> str:
    metrics = report["metrics"]
    removed = " (a temporary folder, now removed; --model-dir keeps one)"
    lines = [
        "keras_estimator demo: TF1-style model_fn on the 8x8 digits",
        f"  model_dir        {report['model_dir']}" + (removed if report.get("removed") else ""),
        f"  training         {_training_line(report)}",
        f"  eval accuracy    {float(metrics['accuracy']):.4f}",
        f"  eval loss        {float(metrics['loss']):.4f}",
        f"  predicted        {report['predicted']}",
        f"  actual           {report['actual']}",
        f"  checkpoint       {report['checkpoint']}",
    ]
    return "\n".join(lines)
