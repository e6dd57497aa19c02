"""One task of a TF_CONFIG cluster with a ps task, running train_and_evaluate (run by
test_parameter_servers.py).

argv: task type, cluster as JSON, model_dir, max_steps.
"""

import json
import os
import sys

task_type, cluster, model_dir, max_steps = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
os.environ["TF_CONFIG"] = json.dumps(
    {"cluster": json.loads(cluster), "task": {"type": task_type, "index": 0}}
)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import logging  # noqa: E402

import numpy as np  # noqa: E402
from helpers import classifier_model_fn, dataset_input_fn  # noqa: E402

import keras_estimator as estimator  # noqa: E402

logging.getLogger("keras_estimator").setLevel(logging.INFO)
logging.getLogger("tensorflow").setLevel(logging.INFO)  # LoggingTensorHook's lines
rng = np.random.RandomState(0)
x = rng.randn(128, 8).astype("float32")
y = np.argmax(x[:, :3], 1).astype("int64")
config = estimator.RunConfig(model_dir=model_dir, save_checkpoints_steps=20)
est = estimator.Estimator(classifier_model_fn, config=config, params={})
result = estimator.train_and_evaluate(
    est,
    estimator.TrainSpec(
        dataset_input_fn(x, y, 16, repeat=True),
        max_steps=max_steps,
        # A hook fetching from the scheduled step (the chief runs hooks).
        hooks=[estimator.LoggingTensorHook({"hook_step": "global_step"}, every_n_iter=20)],
    ),
    estimator.EvalSpec(dataset_input_fn(x, y, 64)),
)
assert result == (None, None), result  # no evaluator task in this cluster
print(f"{task_type} done", flush=True)
