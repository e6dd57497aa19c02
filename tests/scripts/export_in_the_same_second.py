"""Exports one trained model_dir twice into a shared export base, starting at a given wall
clock time, so that two of these processes export in the same second (run by
tests/export/test_concurrent_exports.py).

argv: model_dir export_base go_file. A first export into a private directory warms
TensorFlow up; then it prints READY and waits for go_file, which holds the unix time to
start at. Prints EXPORTED <path> for each shared export.
"""

import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import tensorflow as tf  # noqa: E402
from helpers import make_estimator  # noqa: E402

from keras_estimator import export  # noqa: E402

model_dir, export_base, go_file = sys.argv[1:4]
est = make_estimator(model_dir)
receiver = export.build_raw_serving_input_receiver_fn({"x": tf.TensorSpec([None, 8], tf.float32)})
est.export_saved_model(os.path.join(export_base + "-warmup", str(os.getpid())), receiver)
print("READY", flush=True)
while not os.path.exists(go_file):
    time.sleep(0.01)
with open(go_file) as f:
    start_at = float(f.read())
time.sleep(max(start_at - time.time(), 0))
for _ in range(2):
    path = est.export_saved_model(export_base, receiver).decode()
    print(f"EXPORTED {path}", flush=True)
