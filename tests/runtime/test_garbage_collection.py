"""TensorFlow's import-time objects leave the garbage collector's walk when the first
Estimator is made (utils/garbage_collection.py); objects made later are still collected."""

import textwrap

from helpers import run_python

_FREEZE = textwrap.dedent(
    """
    import gc, sys, weakref
    import numpy as np
    import tensorflow as tf
    import keras_estimator as estimator

    def model_fn(features, labels, mode):
        logits = tf.compat.v1.layers.dense(features, 2)
        loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
        step = tf.compat.v1.train.get_or_create_global_step()
        train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(loss, step)
        return estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

    def make_estimator(model_dir):
        return estimator.Estimator(model_fn, model_dir=model_dir)

    assert gc.get_freeze_count() == 0, "importing must not freeze anything"
    est = make_estimator(sys.argv[1])
    frozen = gc.get_freeze_count()
    print("frozen", frozen)

    class Node:
        pass

    # A cycle made after the freeze is still collected.
    a, b = Node(), Node()
    a.other, b.other = b, a
    gone = weakref.ref(a)
    del a, b
    gc.collect()
    assert gone() is None, "a reference cycle made after the freeze was not collected"
    x = np.random.RandomState(0).rand(32, 4).astype("float32")
    y = (x.sum(axis=1) > 2).astype("int64")
    est.train(lambda: tf.data.Dataset.from_tensor_slices((x, y)).batch(8), steps=3)
    make_estimator(sys.argv[1] + "_2")
    # Frozen objects that die leave the permanent generation; none are added again.
    assert gc.get_freeze_count() <= frozen, "only the first Estimator freezes"
    print("ok")
    """
)


def test_the_first_estimator_freezes_import_time_objects_once(tmp_path):
    result = run_python("-c", _FREEZE, str(tmp_path / "model"))
    assert result.returncode == 0, result.stderr[-3000:]
    frozen = int(result.stdout.split("frozen ")[1].split()[0])
    assert frozen > 100_000  # TensorFlow and Keras alone leave ~400,000
    assert result.stdout.strip().endswith("ok")


def test_freezing_is_off_with_the_environment_variable(tmp_path):
    result = run_python(
        "-c",
        _FREEZE,
        str(tmp_path / "model"),
        env={"KERAS_ESTIMATOR_GC_FREEZE": "0"},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "frozen 0" in result.stdout and result.stdout.strip().endswith("ok")
