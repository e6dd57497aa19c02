"""Trains with frequent checkpoints and aggressive garbage collection until killed
(run by test_sidecar_reads.py). argv: model_dir."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy as np  # noqa: E402
from helpers import classifier_model_fn, dataset_input_fn  # noqa: E402

import keras_estimator as estimator  # noqa: E402

rng = np.random.RandomState(0)
x = rng.randn(128, 8).astype("float32")
y = np.argmax(x[:, :3], 1).astype("int64")
config = estimator.RunConfig(model_dir=sys.argv[1], save_checkpoints_steps=3,
                             keep_checkpoint_max=1, log_step_count_steps=3)  # fmt: skip
est = estimator.Estimator(classifier_model_fn, config=config, params={})
est.train(dataset_input_fn(x, y, 16, repeat=True), steps=10_000_000)
