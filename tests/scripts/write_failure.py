"""A checkpoint write that fails (RLIMIT_FSIZE: files may not grow past 1000 bytes: model_dir's
lock file, about 400 bytes, fits; the checkpoint's .data file, about 2.4 KB, does not), then
succeeds once the limit is lifted (run by test_faults.py). Prints a JSON report."""

import json
import os
import resource
import signal
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from helpers import classifier_model_fn, dataset_input_fn  # noqa: E402

import keras_estimator as estimator  # noqa: E402
from keras_estimator.checkpoint.checkpoint_files import CheckpointWriteError  # noqa: E402

model_dir = sys.argv[1]
rng = np.random.RandomState(0)
x = rng.randn(64, 8).astype("float32")
y = np.argmax(x[:, :3], 1).astype("int64")
config = estimator.RunConfig(model_dir=model_dir, save_checkpoints_steps=5, save_summary_steps=0)
est = estimator.Estimator(classifier_model_fn, config=config, params={})
train = dataset_input_fn(x, y, 16, repeat=True)
est.train(train, steps=5)
report = {"before": os.path.basename(est.latest_checkpoint())}

signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a too-large write fails with EFBIG instead
soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
resource.setrlimit(resource.RLIMIT_FSIZE, (1000, hard))
try:
    est.train(train, steps=5)
    report["error"] = None
except CheckpointWriteError as exc:
    report["error"] = str(exc)
finally:
    resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))

latest = est.latest_checkpoint()
report["after_failure"] = os.path.basename(latest)
reader = tf.train.load_checkpoint(latest)
report["readable"] = all(
    reader.get_tensor(name) is not None for name in reader.get_variable_to_shape_map()
)
report["leftovers"] = sorted(n for n in os.listdir(model_dir) if "temp" in n)
est.train(train, steps=5)
report["resumed"] = int(est.get_variable_value("global_step"))
print("REPORT " + json.dumps(report), flush=True)
