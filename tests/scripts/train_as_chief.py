"""The chief of a TF_CONFIG job running train_and_evaluate (run by the sidecar test).

argv: chief port, model_dir, max_steps.
"""

import json
import os
import sys

port, model_dir, max_steps = sys.argv[1], sys.argv[2], int(sys.argv[3])
os.environ["TF_CONFIG"] = json.dumps(
    {"cluster": {"chief": [f"127.0.0.1:{port}"]}, "task": {"type": "chief", "index": 0}}
)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy as np  # noqa: E402
from helpers import classifier_model_fn, dataset_input_fn  # noqa: E402

import keras_estimator as estimator  # noqa: E402

rng = np.random.RandomState(0)
x = rng.randn(128, 8).astype("float32")
y = np.argmax(x[:, :3], 1).astype("int64")
config = estimator.RunConfig(model_dir=model_dir, save_checkpoints_steps=50)
est = estimator.Estimator(classifier_model_fn, config=config, params={})
result = estimator.train_and_evaluate(
    est,
    estimator.TrainSpec(dataset_input_fn(x, y, 16, repeat=True), max_steps=max_steps),
    estimator.EvalSpec(dataset_input_fn(x, y, 64)),
)
assert result == (None, None), result  # the chief trains; the evaluator evaluates
