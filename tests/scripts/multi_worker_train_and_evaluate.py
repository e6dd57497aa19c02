"""One task of a chief + worker MultiWorkerMirroredStrategy job running train_and_evaluate
on one shared model_dir (run by tests/distribute/test_multi_worker_end.py).

argv: task type ("chief", "worker" or "evaluator"), comma-separated ports (chief's first),
model_dir, output JSON path, model ("classifier": classifier_model_fn, save every 20 steps,
60 steps; "tutorial": the TF docs' Keras-layers model_fn, trained until its sharded input ends).
"""

import json
import os
import sys
import time

task_type, ports, model_dir, out, model = sys.argv[1:6]
chief_port, worker_port = ports.split(",")
os.environ["TF_CONFIG"] = json.dumps(
    {
        "cluster": {"chief": [f"127.0.0.1:{chief_port}"], "worker": [f"127.0.0.1:{worker_port}"]},
        "task": {"type": task_type, "index": 0},
    }
)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

# Before any other TF op; the evaluator is not part of the training cluster.
strategy = tf.distribute.MultiWorkerMirroredStrategy() if task_type != "evaluator" else None

from helpers import classifier_model_fn, dataset_input_fn  # noqa: E402

import keras_estimator as estimator  # noqa: E402

BATCH = 16


class SlowFinalSave(tf.compat.v1.train.CheckpointSaverListener):
    """Makes the chief's final save (step 60) take a few seconds: a worker returning before
    it is complete would read step 40 from model_dir."""

    def before_save(self, session, global_step_value):
        if global_step_value >= 60:
            time.sleep(4)


def tutorial_input_fn(mode, input_context=None):
    """The docs tutorial's input_fn, on a small in-memory image set instead of MNIST."""
    rng = np.random.RandomState(0)
    images = rng.rand(256, 28, 28, 1).astype("float32")
    labels = images[:, :14].mean(axis=(1, 2, 3)) > images[:, 14:].mean(axis=(1, 2, 3))
    dataset = tf.data.Dataset.from_tensor_slices((images, labels.astype("int64")))
    if input_context:
        dataset = dataset.shard(input_context.num_input_pipelines, input_context.input_pipeline_id)
    return dataset.cache().shuffle(256, seed=1).batch(BATCH)


def tutorial_model_fn(features, labels, mode):
    """The docs tutorial's model_fn: a Keras Sequential model inside the model_fn."""
    model = tf.keras.Sequential(
        [
            tf.keras.Input((28, 28, 1)),
            tf.keras.layers.Conv2D(4, 3, activation="relu"),
            tf.keras.layers.MaxPooling2D(),
            tf.keras.layers.Flatten(),
            tf.keras.layers.Dense(16, activation="relu"),
            tf.keras.layers.Dense(10),
        ]
    )
    logits = model(features, training=False)
    if mode == estimator.ModeKeys.PREDICT:
        return estimator.EstimatorSpec(labels=labels, predictions={"logits": logits})
    optimizer = tf.compat.v1.train.GradientDescentOptimizer(learning_rate=0.05)
    loss = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")(
        labels, logits
    )
    loss = tf.reduce_sum(loss) * (1.0 / BATCH)
    if mode == estimator.ModeKeys.EVAL:
        return estimator.EstimatorSpec(mode, loss=loss)
    return estimator.EstimatorSpec(
        mode=mode,
        loss=loss,
        train_op=optimizer.minimize(loss, tf.compat.v1.train.get_or_create_global_step()),
    )


if model == "tutorial":
    config = estimator.RunConfig(train_distribute=strategy)
    est = estimator.Estimator(model_fn=tutorial_model_fn, model_dir=model_dir, config=config)
    train_spec = estimator.TrainSpec(input_fn=tutorial_input_fn)
    eval_spec = estimator.EvalSpec(input_fn=tutorial_input_fn)
else:
    rng = np.random.RandomState(0)
    x = rng.randn(128, 8).astype("float32")
    y = np.argmax(x[:, :3], 1).astype("int64")
    config = estimator.RunConfig(
        model_dir=model_dir, train_distribute=strategy, save_checkpoints_steps=20, tf_random_seed=3
    )
    est = estimator.Estimator(classifier_model_fn, config=config, params={})
    train_spec = estimator.TrainSpec(
        dataset_input_fn(x, y, 8, repeat=True), max_steps=60, saving_listeners=[SlowFinalSave()]
    )
    eval_spec = estimator.EvalSpec(dataset_input_fn(x, y, 64), start_delay_secs=0, throttle_secs=0)

metrics, _ = estimator.train_and_evaluate(est, train_spec, eval_spec)
# What any task reads from model_dir right after train_and_evaluate returns.
names = [n for n in est.get_variable_names() if "kernel" in n]
result = {
    "is_chief": config.is_chief,
    "global_step": int(est.get_variable_value("global_step")),
    "weights": {n: est.get_variable_value(n).tolist() for n in names},
    "in_memory_step": int(est.keras_model._store.variables["global_step"].numpy()),
    "eval_step": None if metrics is None else int(metrics["global_step"]),
    "evaluations": sorted(int(s) for s in est.history.evaluations),
    "returns": sorted(int(s) for s in est.history.loss),  # steps where a call returned
}
with open(out, "w") as f:
    json.dump(result, f)
print(f"{task_type} done at step {result['global_step']}", flush=True)
