"""Trains for a long time until the test sends SIGINT (run by test_interrupts.py).

argv: model_dir. Prints INTERRUPTED <message> and exits 3 on KeyboardInterrupt.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy as np  # noqa: E402
from helpers import classifier_model_fn, dataset_input_fn  # noqa: E402

import keras_estimator as estimator  # noqa: E402

rng = np.random.RandomState(0)
x = rng.randn(128, 8).astype("float32")
y = np.argmax(x[:, :3], 1).astype("int64")
config = estimator.RunConfig(model_dir=sys.argv[1], log_step_count_steps=10,
                             save_checkpoints_steps=100000)  # fmt: skip
est = estimator.Estimator(classifier_model_fn, config=config, params={})
print("READY", flush=True)
try:
    est.train(dataset_input_fn(x, y, 16, repeat=True), steps=10_000_000)
except KeyboardInterrupt as exc:
    print(f"INTERRUPTED {exc}", flush=True)
    sys.exit(3)
