"""One worker of a two-process MultiWorkerMirroredStrategy job (run by test_multi_worker).

argv: worker index, comma-separated ports, model_dir, output JSON path.
"""

import json
import os
import sys

index, ports, model_dir, out = int(sys.argv[1]), sys.argv[2].split(","), sys.argv[3], sys.argv[4]
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

rng = np.random.RandomState(0)
x = rng.randn(128, 8).astype("float32")
y = np.argmax(x[:, :3], 1).astype("int64")
config = estimator.RunConfig(
    model_dir=model_dir, train_distribute=strategy, save_checkpoints_steps=5, tf_random_seed=3
)
est = estimator.Estimator(classifier_model_fn, config=config, params={})
est.train(dataset_input_fn(x, y, 8, repeat=True), steps=12)
store = est.keras_model._store
result = {
    "is_chief": config.is_chief,
    "global_step": int(store.variables["global_step"].numpy()),
    "kernel": store.variables["dense/kernel"].numpy().tolist(),
}
with open(out, "w") as f:
    json.dump(result, f)
