"""Exports claim their timestamped directory: two processes exporting into one directory in
the same second (an exporter in an evaluator and a manual export, say) both succeed, each
with its own complete SavedModel. tf.estimator 2.15 (and keras_estimator before) picked the
first free second without claiming it, and one export failed."""

import os
import time

import numpy as np
import pytest
import tensorflow as tf
from helpers import SCRIPTS, dataset_input_fn, make_estimator, start_python

from keras_estimator.runtime.saved_model_export import claim_export_dir


@pytest.mark.slow  # two child processes with TensorFlow: ~40 s on 2 shared cores
def test_two_processes_exporting_in_the_same_second_write_two_complete_saved_models(
    tmp_path, toy_data
):
    x, y = toy_data
    model_dir, base = str(tmp_path / "model"), str(tmp_path / "export")
    est = make_estimator(model_dir)
    est.train(dataset_input_fn(x, y, 32, repeat=True), steps=3)
    script = os.path.join(SCRIPTS, "export_in_the_same_second.py")
    go_file = str(tmp_path / "go")
    children = [start_python(script, model_dir, base, go_file) for _ in range(2)]
    outputs = ["", ""]
    try:
        for i, child in enumerate(children):  # ready once it has exported once (TF warm)
            while not outputs[i].endswith("READY\n"):
                line = child.stdout.readline()
                assert line, outputs[i][-3000:]  # it ended before it was ready
                outputs[i] += line
        with open(go_file + ".tmp", "w") as f:
            f.write(str(int(time.time()) + 1.05))  # both start just after the same second
        os.rename(go_file + ".tmp", go_file)
        for i, child in enumerate(children):
            outputs[i] += child.communicate(timeout=240)[0]
    finally:
        for child in children:
            child.kill()
    for child, output in zip(children, outputs):
        assert child.returncode == 0, output[-3000:]
    paths = [line.split(" ", 1)[1] for out in outputs for line in out.splitlines()
             if line.startswith("EXPORTED ")]  # fmt: skip
    assert len(paths) == 4 and len(set(paths)) == 4, paths
    assert sorted(os.listdir(base)) == sorted(os.path.basename(p) for p in paths)  # no temp-*
    expected = None
    for path in paths:
        serve = tf.saved_model.load(path).signatures["serving_default"]
        probabilities = serve(x=tf.constant(x[:4]))["probabilities"].numpy()
        if expected is None:
            expected = probabilities
        np.testing.assert_allclose(probabilities, expected, rtol=1e-6)


def test_a_claim_skips_stamps_taken_as_exports_or_as_exports_in_progress(tmp_path):
    base = str(tmp_path)
    now = int(time.time())
    taken = {now, now + 2, now + 4}
    for stamp in range(now, now + 5):
        os.mkdir(os.path.join(base, str(stamp) if stamp in taken else f"temp-{stamp}"))
    export_dir, temp_dir = claim_export_dir(base)
    stamp = int(os.path.basename(export_dir))
    assert stamp >= now + 5  # neither a finished export nor one in progress is shared
    assert temp_dir == os.path.join(base, f"temp-{stamp}") and os.listdir(temp_dir) == []
    again, _ = claim_export_dir(base)  # the same second: the next stamp
    assert int(os.path.basename(again)) > stamp
