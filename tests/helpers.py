"""Shared by the tests in every folder (importable as `helpers`: pyproject.toml puts tests/ on
pytest's pythonpath, and the scripts in scripts/ put it on sys.path themselves).

- small model_fns and input_fns (legacy TF1 style), a hook that records the step's noise,
  and the one Estimator factory;
- where the test data and scripts are;
- the one way to run a real child Python process (or any command) from a test.
"""

import functools
import os
import socket
import subprocess
import sys

import numpy as np
import tensorflow.compat.v1 as tf

import keras_estimator as estimator

TESTS_DIR = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(TESTS_DIR)  # the repository
SCRIPTS = os.path.join(TESTS_DIR, "scripts")  # programs the tests run in child processes
FIXTURES = os.path.join(TESTS_DIR, "fixtures")  # committed model_dirs and their makers


# -- model_fns, input_fns, the Estimator factory ----------------------------------------------


@functools.cache
def mirrored_strategy():
    """One MirroredStrategy over the two logical CPUs (conftest.py) for the whole test process.
    TF 2.21 reuses collective instance keys across MirroredStrategy objects in one process: a
    second strategy's all-reduce of a different shape fails with "Shape mismatch in the
    collective instance 100". Every test that needs one takes this one."""
    import tensorflow as tf2

    return tf2.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])


def dataset_input_fn(x, y=None, batch_size=32, repeat=False, shuffle=False):
    def input_fn():
        features = {"x": x}
        ds = tf.data.Dataset.from_tensor_slices((features, y) if y is not None else features)
        if shuffle:
            ds = ds.shuffle(len(x), seed=1)
        if repeat:
            ds = ds.repeat()
        return ds.batch(batch_size)

    return input_fn


def classifier_model_fn(features, labels, mode, params):
    """The issue's example: dense + dropout + dense, Adam, accuracy."""
    net = tf.layers.dense(features["x"], params.get("hidden", 16), activation=tf.nn.relu)
    net = tf.layers.dropout(net, 0.2, training=mode == estimator.ModeKeys.TRAIN)
    logits = tf.layers.dense(net, params.get("n_classes", 3))
    if mode == estimator.ModeKeys.PREDICT:
        return estimator.EstimatorSpec(
            mode,
            predictions={"classes": tf.argmax(logits, 1), "probabilities": tf.nn.softmax(logits)},
        )
    loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
    if mode == estimator.ModeKeys.EVAL:
        return estimator.EstimatorSpec(
            mode,
            loss=loss,
            eval_metric_ops={"accuracy": tf.metrics.accuracy(labels, tf.argmax(logits, 1))},
        )
    train_op = tf.train.AdamOptimizer(params.get("lr", 0.01)).minimize(
        loss, global_step=tf.train.get_global_step()
    )
    return estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def noise_recording_model_fn(log_every=None, in_cond=False, op_seed=None, slots=40):
    """Each step records its draw of `noise` (uniform, [1], op seed `op_seed`) in
    `draws[global_step]` (`slots` of them); with `log_every`, the EstimatorSpec carries a
    LoggingTensorHook fetching the loss every `log_every` steps; with `in_cond`, the noise
    is drawn in a tf.cond branch."""

    def model_fn(features, labels, mode, params):
        draws = tf.get_variable("draws", [slots], initializer=tf.zeros_initializer(),
                                trainable=False)  # fmt: skip

        def draw():
            return tf.random.uniform([1], seed=op_seed)

        drawn = tf.cond(tf.constant(True), draw, lambda: tf.zeros([1])) if in_cond else draw()
        noise = tf.identity(drawn, name="noise")
        w = tf.get_variable("w", [], initializer=tf.zeros_initializer())
        loss = tf.reduce_mean(features["x"] * w)
        step = tf.train.get_global_step()
        record = tf.scatter_update(draws, step, noise[0])
        hooks = []
        if log_every is not None:
            hooks = [tf.train.LoggingTensorHook({"loss": loss}, every_n_iter=log_every)]
        return estimator.EstimatorSpec(mode, loss=loss, train_op=tf.group(
            record, tf.assign_add(step, 1)), training_hooks=hooks)  # fmt: skip

    return model_fn


class NoiseFetcher(tf.train.SessionRunHook):
    """Fetches the tensor `name` (the step's noise) every `every` steps from step `first` on
    and keeps what it saw, by the hook's own step count."""

    def __init__(self, every, first=0, name="noise:0"):
        self.every, self.first, self.name, self.seen, self._step = every, first, name, {}, 0

    def before_run(self, run_context):
        if self._step >= self.first and (self._step - self.first) % self.every == 0:
            return tf.train.SessionRunArgs(self.name)
        return None

    def after_run(self, run_context, run_values):
        if run_values.results is not None:
            self.seen[self._step] = float(run_values.results[0])
        self._step += 1


def make_estimator(model_dir, model_fn=classifier_model_fn, *, params=None, **config):
    """An `Estimator` of `model_fn` (classifier_model_fn unless given) in `model_dir`.

    `params` defaults to `{}`. Keyword arguments, if any, are the `RunConfig`'s
    (`make_estimator(tmp_path, save_checkpoints_steps=5)`); without them the Estimator gets
    `model_dir=` and its default RunConfig, exactly as `Estimator(model_fn, model_dir=...)`.
    """
    params = {} if params is None else params
    if config:
        config = estimator.RunConfig(model_dir=str(model_dir), **config)
        return estimator.Estimator(model_fn, config=config, params=params)
    return estimator.Estimator(model_fn, model_dir=str(model_dir), params=params)


def accuracy_np(est, x, y, batch_size=64):
    preds = est.predict(dataset_input_fn(x, batch_size=batch_size), predict_keys="classes")
    return float(np.mean(np.array([p["classes"] for p in preds]) == y))


# -- child processes -------------------------------------------------------------------------


IRIS_KEYS = ["SepalLength", "SepalWidth", "PetalLength", "PetalWidth"]


def iris_like():
    """(x [150, 4], y [150]) of the iris-like data the canned fixtures were made with."""
    data = np.load(os.path.join(FIXTURES, "canned_tf_estimator_2_15", "iris_like.npz"))
    return data["x"], data["y"]


def iris_features(x):
    """The features dict of `x` rows, keyed by IRIS_KEYS."""
    return {key: x[:, i] for i, key in enumerate(IRIS_KEYS)}


def iris_columns():
    """One numeric feature column per IRIS_KEYS entry."""
    return [tf.feature_column.numeric_column(key) for key in IRIS_KEYS]


def assert_predictions_match(predictions, expected, rtol=1e-5, atol=1e-6):
    """Each predicted dict has the keys and values of its `expected` dict (bytes decoded)."""
    for got, want in zip(predictions, expected, strict=True):
        assert sorted(got) == sorted(want)
        for key, value in want.items():
            if isinstance(value[0], str):
                assert [v.decode() for v in got[key]] == value
            else:
                np.testing.assert_allclose(got[key], value, rtol=rtol, atol=atol)


def child_env(extra=None):
    """The environment of a child process: this process's, TensorFlow's C++ log at warnings
    and above (TF_CPP_MIN_LOG_LEVEL=2), and no TF_CONFIG (a child joins a cluster only when
    its own script sets one). `extra` variables are added last."""
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    env.pop("TF_CONFIG", None)
    env.update(extra or {})
    return env


def run_process(command, *, env=None, timeout=300, cwd=None):
    """Runs `command` (a list) in a real child process until it exits; returns the
    CompletedProcess with its stdout and stderr as text. `env`: extra variables."""
    return subprocess.run(
        command, capture_output=True, text=True, timeout=timeout, cwd=cwd, env=child_env(env)
    )


def run_python(*args, env=None, timeout=300, cwd=None):
    """`python *args` (this interpreter) in a child process, run to its end (run_process)."""
    return run_process([sys.executable, *args], env=env, timeout=timeout, cwd=cwd)


def start_python(*args, env=None, stdout=subprocess.PIPE, stderr=subprocess.STDOUT):
    """Starts `python *args` (this interpreter) in a child process and returns its Popen
    (text mode; stdout piped, stderr merged into it unless given). The caller waits for it
    and kills it in a `finally`."""
    return subprocess.Popen(
        [sys.executable, *args], stdout=stdout, stderr=stderr, text=True, env=child_env(env)
    )


def catches_signal(pid, signum):
    """Whether process `pid` has installed a handler for `signum` (Linux: the SigCgt mask of
    /proc/<pid>/status). True where /proc is not there, so that a caller waiting for it falls
    back on its own delay. Tests use it to signal a child only once train() is listening."""
    try:
        with open(f"/proc/{pid}/status") as f:
            mask = next(line for line in f if line.startswith("SigCgt:")).split()[1]
    except (OSError, StopIteration):
        return True
    return bool(int(mask, 16) >> (int(signum) - 1) & 1)


def free_ports(n):
    """`n` distinct free TCP ports on 127.0.0.1, as strings (all bound at once, then freed)."""
    sockets = [socket.socket() for _ in range(n)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [str(s.getsockname()[1]) for s in sockets]
    for s in sockets:
        s.close()
    return ports
