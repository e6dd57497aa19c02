"""Trains for a long time until the test sends SIGINT or SIGTERM (test_interrupts.py,
test_sigterm.py, test_model_dir_lock.py).

argv: model_dir [--no-sigterm-save] [--slow-final-save]. Prints READY before train(), then
INTERRUPTED <message> and exits 3 on KeyboardInterrupt; SIGTERM's TrainingTerminated is
not caught (the process exits 143). --no-sigterm-save: RunConfig(save_on_sigterm=False).
--slow-final-save: a saving listener prints SAVING <step> and sleeps 60 s before any save
after step 0 (a window for a second signal).
"""

import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from helpers import classifier_model_fn, dataset_input_fn  # noqa: E402

import keras_estimator as estimator  # noqa: E402


class SlowSave(tf.compat.v1.train.CheckpointSaverListener):
    def before_save(self, session, global_step_value):
        if global_step_value > 0:
            print(f"SAVING {global_step_value}", flush=True)
            time.sleep(60)


rng = np.random.RandomState(0)
x = rng.randn(128, 8).astype("float32")
y = np.argmax(x[:, :3], 1).astype("int64")
config = estimator.RunConfig(model_dir=sys.argv[1], log_step_count_steps=10,
                             save_checkpoints_steps=100000,
                             save_on_sigterm="--no-sigterm-save" not in sys.argv)  # fmt: skip
est = estimator.Estimator(classifier_model_fn, config=config, params={})
listeners = [SlowSave()] if "--slow-final-save" in sys.argv else None
print("READY", flush=True)
try:
    est.train(dataset_input_fn(x, y, 16, repeat=True), steps=10_000_000,
              saving_listeners=listeners)  # fmt: skip
except KeyboardInterrupt as exc:
    print(f"INTERRUPTED {exc}", flush=True)
    sys.exit(3)
