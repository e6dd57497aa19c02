"""A long training run in chunks, measured after each (tests/test_long_run.py).

argv: model_dir, chunks, steps per chunk, save_checkpoints_steps, save_summary_steps,
keep_checkpoint_max, output JSON path.

One Estimator trains `chunks` x `train(steps=...)`. After each chunk it records the
process's resident memory (VmRSS), the files in model_dir, and what the event files hold,
read back with `tf.compat.v1.train.summary_iterator` while the writer is still open.
Writes a JSON summary to the output path. A watchdog ends the process after 1500 s.
"""

import json
import os
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from helpers import classifier_model_fn, dataset_input_fn  # noqa: E402

import keras_estimator as estimator  # noqa: E402

watchdog = threading.Timer(1500, os._exit, (2,))
watchdog.daemon = True
watchdog.start()


def rss_mb():
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    raise RuntimeError("no VmRSS in /proc/self/status")


def read_events(model_dir):
    """{file name: {"records": n, "tags": {tag: [steps]}}} for every event file."""
    found = {}
    for name in sorted(os.listdir(model_dir)):
        if not name.startswith("events.out.tfevents"):
            continue
        tags, records = {}, 0
        for event in tf.compat.v1.train.summary_iterator(os.path.join(model_dir, name)):
            records += 1
            for value in event.summary.value:
                tags.setdefault(value.tag, []).append(int(event.step))
        found[name] = {"records": records, "tags": tags}
    return found


def main(model_dir, chunks, steps, save_steps, summary_steps, keep_max, out_path):
    rng = np.random.RandomState(0)
    x = rng.randn(256, 8).astype("float32")
    y = np.argmax(x[:, :3], 1).astype("int64")
    config = estimator.RunConfig(
        model_dir=model_dir,
        save_checkpoints_steps=save_steps,
        save_summary_steps=summary_steps,
        keep_checkpoint_max=keep_max,
        tf_random_seed=1,
    )
    est = estimator.Estimator(classifier_model_fn, config=config, params={})
    input_fn = dataset_input_fn(x, y, 32, repeat=True, shuffle=True)
    started = time.time()
    records = []
    for chunk in range(chunks):
        est.train(input_fn, steps=steps)
        rss = rss_mb()
        events = read_events(model_dir)
        records.append(
            {
                "chunk": chunk + 1,
                "global_step": int(est.get_variable_value("global_step")),
                "rss_mb": round(rss, 1),
                "files": sorted(os.listdir(model_dir)),
                "events": events,
                "seconds": round(time.time() - started, 1),
            }
        )
        print(
            f"chunk {chunk + 1}: step {records[-1]['global_step']}, rss {rss:.1f} MB, "
            f"{len(records[-1]['files'])} files, {time.time() - started:.1f}s",
            flush=True,
        )
    with open(out_path, "w") as out:
        json.dump({"chunks": records, "seconds": round(time.time() - started, 1)}, out)


if __name__ == "__main__":
    main(sys.argv[1], *map(int, sys.argv[2:7]), sys.argv[7])
