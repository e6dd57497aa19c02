"""evaluate() with a MultiWorkerMirroredStrategy as eval_distribute where it spans one
machine (run by tests/distribute/test_eval_distribute.py): without TF_CONFIG, or on the
`evaluator` task of a cluster (where tf.estimator 2.15 ran its evaluations).

argv: case ("local" or "evaluator"), model_dir (holding a checkpoint), output JSON path.
"""

import json
import os
import sys

case, model_dir, out = sys.argv[1:4]
if case == "evaluator":
    os.environ["TF_CONFIG"] = json.dumps(
        {
            "cluster": {
                "chief": ["127.0.0.1:1"],
                "worker": ["127.0.0.1:2"],
                "evaluator": ["127.0.0.1:3"],
            },
            "task": {"type": "evaluator", "index": 0},
        }
    )
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

strategy = tf.distribute.MultiWorkerMirroredStrategy()  # before any other TF op

from helpers import classifier_model_fn  # noqa: E402

import keras_estimator as estimator  # noqa: E402

traced, contexts = [], []


def model_fn(features, labels, mode, params):
    replica = tf.distribute.get_replica_context()
    replica_id = None if replica is None else tf.get_static_value(replica.replica_id_in_sync_group)
    traced.append(None if replica_id is None else int(replica_id))
    return classifier_model_fn(features, labels, mode, params)


def input_fn(input_context=None):
    contexts.append(None if input_context is None else input_context.num_replicas_in_sync)
    rng = np.random.RandomState(0)
    x = rng.randn(40, 8).astype("float32")
    y = np.argmax(x[:, :3], 1).astype("int64")
    return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).batch(8)


results = {}
for name, config in (
    ("plain", estimator.RunConfig(model_dir=model_dir)),
    ("distributed", estimator.RunConfig(model_dir=model_dir, eval_distribute=strategy)),
    (  # the same strategy as train_distribute (a train_and_evaluate job's RunConfig)
        "both",
        estimator.RunConfig(
            model_dir=model_dir, train_distribute=strategy, eval_distribute=strategy
        ),
    ),
):
    traced.clear()
    contexts.clear()
    metrics = estimator.Estimator(model_fn, config=config, params={}).evaluate(input_fn)
    results[name] = {
        "metrics": {k: float(v) for k, v in metrics.items()},
        "traced": list(traced),
        "contexts": list(contexts),
    }
with open(out, "w") as f:
    json.dump(results, f)
