"""Evaluating and predicting from another process while training writes checkpoints every
few steps and deletes old ones (keep_checkpoint_max=1): every read is of a complete
checkpoint, nothing crashes, and the global step seen never goes backwards."""

import os
import subprocess
import time

import tensorflow as tf
from helpers import SCRIPTS, dataset_input_fn, make_estimator, start_python

SCRIPT = os.path.join(SCRIPTS, "train_while_read.py")


def test_evaluate_and_predict_while_another_process_trains(tmp_path, toy_data):
    model_dir = str(tmp_path / "model")
    trainer = start_python(SCRIPT, model_dir, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    x, y = toy_data
    seen = []
    try:
        deadline = time.time() + 120
        while tf.train.latest_checkpoint(model_dir) is None:
            assert time.time() < deadline and trainer.poll() is None, trainer.stderr.read()
            time.sleep(0.2)
        reader = make_estimator(model_dir)
        end = time.time() + 12
        while time.time() < end:
            seen.append(int(reader.evaluate(dataset_input_fn(x, y, 64))["global_step"]))
            predictions = list(reader.predict(dataset_input_fn(x[:4], batch_size=4)))
            assert len(predictions) == 4
        assert trainer.poll() is None  # the trainer kept going meanwhile
    finally:
        trainer.kill()
        trainer.wait(30)
    assert len(seen) >= 3 and seen == sorted(seen) and seen[-1] > seen[0]
