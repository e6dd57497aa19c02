"""A two-worker job in which worker 1 is killed at global step 25 (test_multi_worker).

argv: worker index, comma-separated ports, model_dir.
"""

import json
import os
import signal
import sys
import time

index, ports, model_dir = int(sys.argv[1]), sys.argv[2].split(","), sys.argv[3]
os.environ["TF_CONFIG"] = json.dumps(
    {
        "cluster": {"worker": [f"127.0.0.1:{port}" for port in ports]},
        "task": {"type": "worker", "index": index},
    }
)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

strategy = tf.distribute.MultiWorkerMirroredStrategy()

import tensorflow.compat.v1 as v1  # noqa: E402
from helpers import classifier_model_fn, dataset_input_fn  # noqa: E402

import keras_estimator as estimator  # noqa: E402


class DieAtStep(v1.train.SessionRunHook):
    def begin(self):
        self._step = v1.train.get_global_step()

    def before_run(self, run_context):
        return v1.train.SessionRunArgs(self._step)

    def after_run(self, run_context, run_values):
        if run_values.results >= 25:
            os.kill(os.getpid(), signal.SIGKILL)


rng = np.random.RandomState(0)
x = rng.randn(64, 8).astype("float32")
y = np.argmax(x[:, :3], 1).astype("int64")
config = estimator.RunConfig(
    model_dir=model_dir, train_distribute=strategy, save_checkpoints_steps=10
)
est = estimator.Estimator(classifier_model_fn, config=config, params={})
started = time.time()
try:
    est.train(
        dataset_input_fn(x, y, 8, repeat=True),
        steps=100000,
        hooks=[DieAtStep()] if index == 1 else [],
    )
except tf.errors.OpError as exc:
    print(f"FAILED after {time.time() - started:.1f}s: {type(exc).__name__}: {exc.message}")
    sys.exit(3)
