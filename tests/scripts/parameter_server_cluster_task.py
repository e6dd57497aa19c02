"""One task of a parameter-server cluster (chief, workers, ps tasks) running train_and_evaluate
(run by tests/distribute/test_parameter_server_failures.py).

argv: task type, task index, cluster as JSON, model_dir, max_steps, output JSON path (the
chief writes its result there), "every_step" (a hook fetches every step: one step per
call) or "chunked" (no hook: the chief schedules runs of steps onto both workers).
"""

import json
import os
import sys

task_type, index, cluster, model_dir = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
max_steps, out, hooked = int(sys.argv[5]), sys.argv[6], sys.argv[7] == "every_step"
os.environ["TF_CONFIG"] = json.dumps(
    {"cluster": json.loads(cluster), "task": {"type": task_type, "index": index}}
)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import logging  # noqa: E402

import numpy as np  # noqa: E402
import tensorflow.compat.v1 as v1  # noqa: E402
from helpers import classifier_model_fn, dataset_input_fn  # noqa: E402

import keras_estimator as estimator  # noqa: E402

logging.getLogger("keras_estimator").setLevel(logging.INFO)


class StepsSeen(v1.train.SessionRunHook):
    """The global steps the chief's hook sees, every step (it fetches the global step)."""

    def __init__(self):
        self.steps = []

    def begin(self):
        self._step = v1.train.get_global_step()

    def before_run(self, run_context):
        return v1.train.SessionRunArgs(self._step)

    def after_run(self, run_context, run_values):
        self.steps.append(int(run_values.results))


rng = np.random.RandomState(0)
x = rng.randn(128, 8).astype("float32")
y = np.argmax(x[:, :3], 1).astype("int64")
config = estimator.RunConfig(
    model_dir=model_dir, save_checkpoints_steps=10, log_step_count_steps=10
)
est = estimator.Estimator(classifier_model_fn, config=config, params={})
seen = StepsSeen()
result = estimator.train_and_evaluate(
    est,
    estimator.TrainSpec(
        dataset_input_fn(x, y, 16, repeat=True), max_steps=max_steps, hooks=[seen] if hooked else []
    ),
    estimator.EvalSpec(dataset_input_fn(x, y, 64)),
)
if task_type == "chief":
    with open(out, "w") as f:
        json.dump(
            {"global_step": int(est.get_variable_value("global_step")), "steps_seen": seen.steps},
            f,
        )
print(f"{task_type}:{index} done", flush=True)
