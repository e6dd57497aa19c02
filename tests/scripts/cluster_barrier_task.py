"""One task of a two-worker MultiWorkerMirroredStrategy cluster calling the end-of-training
barrier wrongly (run by tests/distribute/test_multi_worker_end.py).

argv: worker index, comma-separated ports, case: "different_steps" (task i ends at step
10 + i) or "absent" (task 1 never arrives; task 0 waits 3 s).
"""

import json
import os
import sys
import time

index, ports, case = int(sys.argv[1]), sys.argv[2].split(","), sys.argv[3]
os.environ["TF_CONFIG"] = json.dumps(
    {
        "cluster": {"worker": [f"127.0.0.1:{port}" for port in ports]},
        "task": {"type": "worker", "index": index},
    }
)

import tensorflow as tf  # noqa: E402

strategy = tf.distribute.MultiWorkerMirroredStrategy()

from keras_estimator.distribute import cluster_barrier  # noqa: E402

if case == "absent" and index == 1:
    time.sleep(30)  # alive (its heartbeats go on) but never at the barrier
    sys.exit(0)
try:
    cluster_barrier.wait_for_every_task(strategy, 10 + index if case == "different_steps" else 10,
                                        timeout_secs=3)  # fmt: skip
except (ValueError, tf.errors.DeadlineExceededError) as exc:
    message = exc.message if isinstance(exc, tf.errors.OpError) else str(exc)
    print(f"REFUSED {type(exc).__name__}: {message}", flush=True)
    sys.exit(3)
print("PASSED", flush=True)
