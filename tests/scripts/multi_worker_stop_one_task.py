"""One task of a two-worker MultiWorkerMirroredStrategy job where one task alone asks to
stop (run by tests/distribute/test_multi_worker_stop.py).

argv: worker index, comma-separated ports, model_dir, output JSON path, case, stopping task.
case "hook": the stopping task's StopAtStepHook ends its training at step 7; "sigterm": the
stopping task sends itself SIGTERM after step 5. Every task trains with max_steps=40.
"""

import json
import logging
import os
import signal
import sys

index, ports = int(sys.argv[1]), sys.argv[2].split(",")
model_dir, out, case, stopping = sys.argv[3], sys.argv[4], sys.argv[5], int(sys.argv[6])
os.environ["TF_CONFIG"] = json.dumps(
    {
        "cluster": {"worker": [f"127.0.0.1:{port}" for port in ports]},
        "task": {"type": "worker", "index": index},
    }
)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

strategy = tf.distribute.MultiWorkerMirroredStrategy()  # before any other TF op

from helpers import classifier_model_fn, dataset_input_fn  # noqa: E402

import keras_estimator as estimator  # noqa: E402

logging.getLogger("keras_estimator").setLevel(logging.INFO)


class SigtermAfter(tf.compat.v1.train.SessionRunHook):
    """Sends this process SIGTERM once, after the step it fetched global step `step` in
    (a preemption notice)."""

    def __init__(self, step):
        self._step = step

    def before_run(self, run_context):
        return tf.compat.v1.train.SessionRunArgs(tf.compat.v1.train.get_global_step())

    def after_run(self, run_context, run_values):
        if run_values.results == self._step:
            os.kill(os.getpid(), signal.SIGTERM)
            self._step = None


hooks = []
if index == stopping:
    hooks = [tf.compat.v1.train.StopAtStepHook(last_step=7) if case == "hook" else SigtermAfter(5)]
rng = np.random.RandomState(0)
x = rng.randn(128, 8).astype("float32")
y = np.argmax(x[:, :3], 1).astype("int64")
config = estimator.RunConfig(
    model_dir=model_dir, train_distribute=strategy, save_checkpoints_steps=100, tf_random_seed=3
)
est = estimator.Estimator(classifier_model_fn, config=config, params={})
status = "returned"
try:
    est.train(dataset_input_fn(x, y, 8, repeat=True), max_steps=40, hooks=hooks)
except SystemExit as exc:
    status = f"exit {exc.code}"
store = est.keras_model._store
result = {
    "is_chief": config.is_chief,
    "status": status,
    "global_step": int(store.variables["global_step"].numpy()),
    "kernel": store.variables["dense/kernel"].numpy().tolist(),
    "latest_checkpoint": est.latest_checkpoint(),
}
with open(out, "w") as f:
    json.dump(result, f)
