"""Ctrl-C (SIGINT) during train(): training stops after the current step, writes a final
checkpoint, raises KeyboardInterrupt, and the same call continues from it (real process)."""

import os
import signal
import time

import tensorflow as tf
from helpers import SCRIPTS, catches_signal, dataset_input_fn, make_estimator, start_python

SCRIPT = os.path.join(SCRIPTS, "interrupt_train.py")


def test_sigint_stops_after_the_step_saves_and_training_continues(tmp_path, toy_data):
    model_dir = str(tmp_path / "model")
    process = start_python(SCRIPT, model_dir)
    try:
        deadline = time.time() + 120
        # The step-0 checkpoint, then train()'s handlers (SIGINT's and SIGTERM's are installed
        # together, ~50 ms after that checkpoint; a SIGINT before them is a bare
        # KeyboardInterrupt at step 0), then some training.
        while tf.train.latest_checkpoint(model_dir) is None or not catches_signal(
            process.pid, signal.SIGTERM
        ):
            assert time.time() < deadline and process.poll() is None, process.stdout.read()
            time.sleep(0.05)
        time.sleep(1.5)  # some training
        process.send_signal(signal.SIGINT)
        output = process.communicate(timeout=60)[0]
    finally:
        process.kill()
    assert process.returncode == 3, output[-3000:]
    assert "Interrupted: training stops after the current step" in output
    message = output.split("INTERRUPTED ")[1]
    step = int(message.split("after step ")[1].split(";")[0])
    assert step > 0 and "Run train() again to continue" in message
    latest = tf.train.latest_checkpoint(model_dir)
    assert latest.endswith(f"model.ckpt-{step}")  # the final checkpoint is this step's
    assert int(tf.train.load_variable(latest, "global_step")) == step

    x, y = toy_data
    est = make_estimator(model_dir)
    est.train(dataset_input_fn(x, y, 16, repeat=True), steps=5)
    assert est.get_variable_value("global_step") == step + 5


def test_a_second_sigint_during_the_final_save_stops_at_once_without_saving(tmp_path, toy_data):
    model_dir = str(tmp_path / "model")
    process = start_python(SCRIPT, model_dir, "--slow-final-save")  # that save sleeps 60 s
    lines = []
    try:
        deadline = time.time() + 120
        while tf.train.latest_checkpoint(model_dir) is None or not catches_signal(
            process.pid, signal.SIGTERM
        ):
            assert time.time() < deadline and process.poll() is None, process.stdout.read()
            time.sleep(0.05)
        time.sleep(1.5)  # some training
        process.send_signal(signal.SIGINT)
        for line in process.stdout:  # until the final save has begun
            lines.append(line)
            if line.startswith("SAVING"):
                break
        started = time.time()
        process.send_signal(signal.SIGINT)
        output = "".join(lines) + process.communicate(timeout=30)[0]
    finally:
        process.kill()
    assert time.time() - started < 30  # not after the 60 s save
    assert process.returncode == 3, output[-3000:]  # KeyboardInterrupt reached the script
    assert tf.train.latest_checkpoint(model_dir).endswith("model.ckpt-0")  # no final save

    x, y = toy_data
    est = make_estimator(model_dir)
    est.train(dataset_input_fn(x, y, 16, repeat=True), steps=2)  # the lock is taken over
    assert est.get_variable_value("global_step") == 2
