"""Inside an Estimator call, the objects older than the call leave the garbage collector's
walk (utils/garbage_collection.py); after it they are collected as before: nothing leaks."""

import textwrap

from helpers import run_python

_FREEZE = textwrap.dedent(
    """
    import gc, sys, weakref
    import numpy as np
    import tensorflow as tf
    import keras_estimator as estimator

    seen = []

    class Probe(tf.compat.v1.train.SessionRunHook):
        def after_run(self, run_context, run_values):
            seen.append(gc.get_freeze_count())

    def model_fn(features, labels, mode):
        logits = tf.compat.v1.layers.dense(features, 2)
        if mode == estimator.ModeKeys.PREDICT:
            return estimator.EstimatorSpec(mode, predictions={"logits": logits})
        loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
        step = tf.compat.v1.train.get_or_create_global_step()
        train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(loss, step)
        return estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

    class Node:
        pass

    def cycle():
        a, b = Node(), Node()
        a.other, b.other = b, a
        return a

    x = np.random.RandomState(0).rand(32, 4).astype("float32")
    y = (x.sum(axis=1) > 2).astype("int64")
    input_fn = lambda: tf.data.Dataset.from_tensor_slices((x, y)).batch(8)
    older = cycle()  # alive before any Estimator; dropped after the calls
    gone_older = weakref.ref(older)
    own = sys.argv[2] == "own"  # the program froze objects itself: they stay frozen
    if own:
        gc.freeze()
        mine = gc.get_freeze_count()
    est = estimator.Estimator(model_fn, model_dir=sys.argv[1])
    est.train(input_fn, steps=3, hooks=[Probe()])
    print("frozen inside", min(seen))
    if own:
        # Still frozen (objects that died since left the count; our unfreeze would empty it).
        assert mine > 100_000 and min(seen) > mine // 2 and gc.get_freeze_count() > mine // 2
        gc.unfreeze()
    assert gc.get_freeze_count() == 0, "a call must unfreeze what it froze"
    est.evaluate(input_fn)
    preds = est.predict(input_fn)
    next(preds)
    assert gc.get_freeze_count() == 0, "suspended at a yield, predict() holds no freeze"
    del preds, older
    gone_est = weakref.ref(est)
    del est
    gc.collect()
    assert gone_older() is None, "a cycle older than the first Estimator was never collected"
    assert gone_est() is None, "a dropped Estimator was never collected"
    print("ok")
    """
)


def test_objects_older_than_a_call_are_frozen_only_during_it(tmp_path):
    result = run_python("-c", _FREEZE, str(tmp_path / "model"), "call")
    assert result.returncode == 0, result.stderr[-3000:]
    frozen = int(result.stdout.split("frozen inside ")[1].split()[0])
    assert frozen > 100_000  # TensorFlow and Keras alone leave ~400,000
    assert result.stdout.strip().endswith("ok")


def test_freezing_is_off_with_the_environment_variable(tmp_path):
    result = run_python(
        "-c", _FREEZE, str(tmp_path / "model"), "call", env={"KERAS_ESTIMATOR_GC_FREEZE": "0"}
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "frozen inside 0" in result.stdout and result.stdout.strip().endswith("ok")


def test_a_program_that_froze_objects_itself_keeps_them_frozen(tmp_path):
    result = run_python("-c", _FREEZE, str(tmp_path / "model"), "own")
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().endswith("ok")
