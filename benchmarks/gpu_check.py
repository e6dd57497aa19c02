"""GPU check: MirroredStrategy over the GPUs and RunConfig.session_config's GPU options.

Run it on a machine with NVIDIA GPUs and a CUDA-enabled TensorFlow:

    python benchmarks/gpu_check.py

Each check runs in its own process (GPU options apply only before TensorFlow first uses
the GPUs) and prints PASS or FAIL with what it measured:

- mirrored: `RunConfig(train_distribute=tf.distribute.MirroredStrategy())` trains a
  model_fn with one replica per GPU; the weights equal one-device training on the global
  batch (TF32 off), evaluate() and predict() work, the GPUs were used.
- allow_growth: `gpu_options.allow_growth=True` turns on memory growth for every GPU and
  the process holds far less than the GPU's memory after training.
- memory_fraction: `gpu_options.per_process_gpu_memory_fraction=0.25`: allocations stop
  near a quarter of the GPU's memory.
- visible_device_list: `gpu_options.visible_device_list` (the last GPU) leaves exactly that
  GPU visible, and training runs there.

Exit status: 0 when every check passed, or when the machine has no GPU (nothing to check:
it says so); 1 when a check failed.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

CHECKS = ("mirrored", "allow_growth", "memory_fraction", "visible_device_list")
GIB = 1 << 30


def _data():
    import numpy as np

    rng = np.random.RandomState(0)
    x = rng.randn(512, 32).astype("float32")
    y = (x[:, :4].sum(axis=1) > 0).astype("int64")
    return x, y


def _model_fn(features, labels, mode):
    import tensorflow.compat.v1 as v1

    import keras_estimator as estimator

    net = v1.layers.dense(features["x"], 64, activation=v1.nn.relu, name="hidden")
    logits = v1.layers.dense(net, 2, name="logits")
    if mode == estimator.ModeKeys.PREDICT:
        return estimator.EstimatorSpec(mode, predictions={"classes": v1.argmax(logits, 1)})
    loss = v1.losses.sparse_softmax_cross_entropy(labels, logits)
    if mode == estimator.ModeKeys.EVAL:
        accuracy = v1.metrics.accuracy(labels, v1.argmax(logits, 1))
        return estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops={"accuracy": accuracy})
    train_op = v1.train.GradientDescentOptimizer(0.1).minimize(
        loss, global_step=v1.train.get_global_step()
    )
    return estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def _input_fn(batch, repeat=True):
    def input_fn():
        import tensorflow as tf

        x, y = _data()
        dataset = tf.data.Dataset.from_tensor_slices(({"x": x}, y))
        return (dataset.repeat() if repeat else dataset).batch(batch, drop_remainder=True)

    return input_fn


def _train(model_dir, steps=20, batch=32, **config):
    import keras_estimator as estimator

    run_config = estimator.RunConfig(model_dir=model_dir, tf_random_seed=1, **config)
    est = estimator.Estimator(_model_fn, config=run_config)
    est.train(_input_fn(batch), steps=steps)
    return est


def _gpu_options(**options):
    import tensorflow as tf

    return tf.compat.v1.ConfigProto(gpu_options=tf.compat.v1.GPUOptions(**options))


def _used_by_this_process_mib():
    """This process's GPU memory per nvidia-smi (None without nvidia-smi)."""
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-compute-apps=pid,used_memory", "--format=csv,noheader,nounits"],
            capture_output=True, text=True, timeout=60, check=True,
        ).stdout  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None
    used = [int(m) for pid, m in (line.split(",") for line in out.splitlines() if line) if
            int(pid) == os.getpid()]  # fmt: skip
    return sum(used)


def _total_mib():
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=memory.total", "--format=csv,noheader,nounits"],
            capture_output=True, text=True, timeout=60, check=True,
        ).stdout  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None
    return int(out.splitlines()[0])


def check_mirrored(tmp):
    import numpy as np
    import tensorflow as tf

    tf.config.experimental.enable_tensor_float_32_execution(False)
    gpus = tf.config.list_physical_devices("GPU")
    strategy = tf.distribute.MirroredStrategy()  # every GPU
    replicas = strategy.num_replicas_in_sync
    assert replicas == len(gpus), f"{replicas} replicas for {len(gpus)} GPUs"
    assert all("GPU" in d for d in strategy.extended.worker_devices), strategy.extended
    per_replica, global_batch = 16, 16 * replicas
    mirrored = _train(os.path.join(tmp, "mirrored"), batch=per_replica, train_distribute=strategy)
    assert mirrored.get_variable_value("global_step") == 20
    with tf.device("/cpu:0"):
        single = _train(os.path.join(tmp, "cpu"), batch=global_batch,
                        train_distribute=tf.distribute.OneDeviceStrategy("/cpu:0"))  # fmt: skip
    worst = 0.0
    for name in mirrored.get_variable_names():
        if name.endswith(("kernel", "bias")):
            got, want = mirrored.get_variable_value(name), single.get_variable_value(name)
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5, err_msg=name)
            worst = max(worst, float(np.max(np.abs(got - want))))
    metrics = mirrored.evaluate(_input_fn(64, repeat=False))
    assert np.isfinite(metrics["loss"]) and metrics["global_step"] == 20, metrics
    predictions = list(mirrored.predict(_input_fn(64, repeat=False)))
    assert len(predictions) == 512, len(predictions)
    peak = tf.config.experimental.get_memory_info("GPU:0")["peak"]
    assert peak > 0, "nothing was allocated on GPU:0"
    return (f"{replicas} replica(s) on {len(gpus)} GPU(s); weights equal one-device CPU training "
            f"on the global batch {global_batch} (max abs diff {worst:.2e}); accuracy "
            f"{metrics['accuracy']:.3f}; GPU:0 peak {peak / GIB:.3f} GiB")  # fmt: skip


def check_allow_growth(tmp):
    import tensorflow as tf

    est = _train(tmp, session_config=_gpu_options(allow_growth=True))
    assert est.get_variable_value("global_step") == 20
    gpus = tf.config.list_physical_devices("GPU")
    growth = [tf.config.experimental.get_memory_growth(gpu) for gpu in gpus]
    assert all(growth), f"memory growth per GPU: {growth}"
    used, total = _used_by_this_process_mib(), _total_mib()
    if used is not None and total:
        assert used < 0.5 * total, f"the process holds {used} MiB of {total} MiB"
        return f"memory growth on for {len(gpus)} GPU(s); process holds {used} of {total} MiB"
    return f"memory growth on for {len(gpus)} GPU(s) (nvidia-smi not found: usage not read)"


def check_memory_fraction(tmp):
    import tensorflow as tf

    fraction = 0.25
    est = _train(tmp, session_config=_gpu_options(per_process_gpu_memory_fraction=fraction))
    assert est.get_variable_value("global_step") == 20
    total = _total_mib()
    blocks, held = 256 << 20, []  # allocate 256 MiB blocks on GPU:0 until it refuses
    limit = (total << 20) if total else 200 * GIB
    try:
        with tf.device("/GPU:0"):
            while len(held) * blocks < limit:
                held.append(tf.zeros([blocks // 4], tf.float32))
    except tf.errors.ResourceExhaustedError:
        pass
    got = len(held) * blocks
    del held
    assert got < limit, f"allocated {got / GIB:.1f} GiB without running out"
    if total:
        share = got / (total << 20)
        assert share <= fraction + 0.05, f"allocated {share:.0%} of the GPU (> {fraction:.0%})"
        return (f"per_process_gpu_memory_fraction={fraction}: allocations stopped at "
                f"{got / GIB:.1f} GiB = {share:.0%} of {total / 1024:.0f} GiB")  # fmt: skip
    return f"allocations stopped at {got / GIB:.1f} GiB (nvidia-smi not found: no total)"


def check_visible_device_list(tmp):
    import tensorflow as tf

    gpus = tf.config.list_physical_devices("GPU")
    last = len(gpus) - 1
    est = _train(tmp, session_config=_gpu_options(visible_device_list=str(last)))
    assert est.get_variable_value("global_step") == 20
    visible = tf.config.get_visible_devices("GPU")
    assert visible == [gpus[last]], f"visible: {visible}, expected {gpus[last]}"
    logical = tf.config.list_logical_devices("GPU")
    assert len(logical) == 1, f"logical GPUs: {logical}"
    peak = tf.config.experimental.get_memory_info("GPU:0")["peak"]
    assert peak > 0, "training did not use the visible GPU"
    return f"visible_device_list={last!r}: only {gpus[last].name} visible; training used it"


def run_one(name):
    """In a child process: one check; prints PASS/FAIL <name>: <detail>."""
    with tempfile.TemporaryDirectory() as tmp:
        try:
            detail = globals()[f"check_{name}"](tmp)
        except Exception as exc:  # noqa: BLE001 - a check reports any failure as FAIL
            print(f"FAIL {name}: {type(exc).__name__}: {exc}", flush=True)
            return 1
    print(f"PASS {name}: {detail}", flush=True)
    return 0


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--check":
        return run_one(sys.argv[2])
    import tensorflow as tf  # listing devices does not initialise them

    gpus = tf.config.list_physical_devices("GPU")
    if not gpus:
        print(
            "gpu_check: no GPU visible to TensorFlow (tf.config.list_physical_devices('GPU') "
            f"is empty; TensorFlow {tf.__version__}, built with CUDA: "
            f"{tf.test.is_built_with_cuda()}). Nothing to check: run this on a machine with "
            "NVIDIA GPUs and a CUDA-enabled TensorFlow (pip install 'tensorflow[and-cuda]')."
        )
        return 0
    print(f"gpu_check: {len(gpus)} GPU(s): {', '.join(g.name for g in gpus)}", flush=True)
    failed = []
    for name in CHECKS:
        child = subprocess.run(
            [sys.executable, os.path.abspath(__file__), "--check", name],
            capture_output=True, text=True, timeout=900,
        )  # fmt: skip
        lines = [line for line in child.stdout.splitlines() if line.startswith(("PASS", "FAIL"))]
        if child.returncode != 0 or not lines or not lines[-1].startswith("PASS"):
            failed.append(name)
            print(lines[-1] if lines else f"FAIL {name}: exit {child.returncode}")
            if not lines:
                print(child.stderr[-3000:])
        else:
            print(lines[-1])
    print(f"gpu_check: {'FAILED: ' + ', '.join(failed) if failed else 'all checks passed'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
