"""Trains a small classifier "forever" until the crash-safety test kills it with SIGKILL.

argv: model_dir. Checkpoints every 5 steps, keeping 2 (tests/test_crash_safety.py).
Prints, flushed, one line per event the test watches for:
  START <global step the train() call starts from>
  SAVING <step>   (before the checkpoint for <step> is written)
  SAVED <step>    (after it was written and the checkpoint state file names it)
A watchdog ends the process after 300 s should the test die without killing it.
"""

import os
import sys
import threading

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow.compat.v1 as tf  # noqa: E402
from helpers import classifier_model_fn, dataset_input_fn  # noqa: E402

import keras_estimator as estimator  # noqa: E402

SAVE_STEPS = 5
KEEP_MAX = 2

watchdog = threading.Timer(300, os._exit, (2,))
watchdog.daemon = True
watchdog.start()


def say(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


class ReportStart(tf.train.SessionRunHook):
    def begin(self):
        self._step = tf.train.get_global_step()

    def after_create_session(self, session, coord):
        say(f"START {int(session.run(self._step))}")


class ReportSaves(tf.train.CheckpointSaverListener):
    def before_save(self, session, global_step_value):
        say(f"SAVING {int(global_step_value)}")

    def after_save(self, session, global_step_value):
        say(f"SAVED {int(global_step_value)}")


def model_fn(features, labels, mode, params):
    # Ballast: 32 MB more in every checkpoint, so a write lasts long enough (tens of ms) for
    # the test's kill to land inside it rather than only before or after it.
    tf.get_variable("ballast", [8_000_000], initializer=tf.zeros_initializer(), trainable=False)
    return classifier_model_fn(features, labels, mode, params)


def main(model_dir):
    rng = np.random.RandomState(0)
    x = rng.randn(256, 8).astype("float32")
    y = np.argmax(x[:, :3], 1).astype("int64")
    config = estimator.RunConfig(
        model_dir=model_dir,
        save_checkpoints_steps=SAVE_STEPS,
        keep_checkpoint_max=KEEP_MAX,
        log_step_count_steps=5,
        save_summary_steps=5,
        tf_random_seed=1,
    )
    est = estimator.Estimator(model_fn, config=config, params={})
    est.train(
        dataset_input_fn(x, y, 16, repeat=True, shuffle=True),
        steps=10_000_000,
        hooks=[ReportStart()],
        saving_listeners=[ReportSaves()],
    )
    say("FINISHED")


if __name__ == "__main__":
    main(sys.argv[1])
