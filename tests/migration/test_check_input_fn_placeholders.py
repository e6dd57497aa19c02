"""`check` agrees with `run` on tf.placeholder in an input_fn. Eagerly TensorFlow refuses a
placeholder, so the Estimator runs such an input_fn in a graph of its own, as tf.estimator
2.15 ran every input_fn; a hook's after_create_session feeds the placeholders there,
running an initializable iterator's initializer with a feed_dict (TF-Ranking's libsvm
example: `_train_input_fn` nested in `get_train_inputs`, returned with its hook, handed to
`TrainSpec(input_fn=...)`). An input_fn with nothing to feed its placeholders fails there as
it failed on 2.15; one the program also calls itself runs eagerly, and fails."""

import textwrap

from helpers import run_python

from keras_estimator.migration import exit_status, scan

PROGRAM = """\
import numpy as np
import tensorflow.compat.v1 as tf

X = np.arange(16, dtype=np.float32).reshape(8, 2)
Y = X.sum(axis=1, keepdims=True)


class IteratorInitializerHook(tf.estimator.SessionRunHook):
    def __init__(self):
        self.iterator_initializer_fn = None

    def after_create_session(self, session, coord):
        self.iterator_initializer_fn(session)


def get_train_inputs(features, labels):
    hook = IteratorInitializerHook()

    def _train_input_fn():
        xp = tf.placeholder(features.dtype, features.shape)
        yp = tf.placeholder(labels.dtype, labels.shape)
        ds = tf.data.Dataset.from_tensor_slices(({"x": xp}, yp)).repeat().batch(4)
        iterator = tf.data.make_initializable_iterator(ds)
        hook.iterator_initializer_fn = lambda sess: sess.run(
            iterator.initializer, feed_dict={xp: features, yp: labels})
        return iterator.get_next()

    return _train_input_fn, hook


def unfed_input_fn():
    x = tf.placeholder(tf.float32, [4, 2])
    return {"x": x}, tf.reduce_sum(x, axis=1, keepdims=True)


def model_fn(features, labels, mode):
    pred = tf.layers.dense(features["x"], 1)
    loss = tf.losses.mean_squared_error(labels, pred)
    train_op = tf.train.GradientDescentOptimizer(0.001).minimize(
        loss, global_step=tf.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def main():
    train_input_fn, train_hook = get_train_inputs(X, Y)
    est = tf.estimator.Estimator(model_fn)
    spec = tf.estimator.TrainSpec(input_fn=INPUT_FN, hooks=[train_hook], max_steps=3)
    est.train(input_fn=spec.input_fn, hooks=list(spec.hooks), max_steps=spec.max_steps)
    print("trained to", est.get_variable_value("global_step"))


if __name__ == "__main__":
    main()
"""


def program(tmp_path, input_fn):
    path = tmp_path / "ranking_libsvm.py"
    path.write_text(PROGRAM.replace("INPUT_FN", input_fn))
    (report,) = scan([str(path)])
    placeholders = [(f.line, f.status) for f in report.findings if f.api == "tf.placeholder"]
    return path, report, placeholders


def test_placeholders_an_iterator_initializer_hook_feeds_are_a_caveat_and_run_runs(tmp_path):
    path, report, placeholders = program(tmp_path, "train_input_fn")
    assert placeholders == [(20, "caveat"), (21, "caveat"), (32, "caveat")]
    fed = next(f for f in report.findings if f.line == 20)
    assert "in an input_fn: the Estimator runs it in a graph of its own" in fed.note
    assert "after_create_session" in fed.note
    unused = next(f for f in report.findings if f.line == 32)  # nothing names it here
    assert "in unfed_input_fn(), which nothing in this script calls" in unused.note
    assert exit_status([report]) == 0

    done = run_python("-m", "keras_estimator", "run", str(path), cwd=str(tmp_path))
    assert done.returncode == 0, done.stderr[-2000:]
    assert "trained to 3" in done.stdout


def test_placeholders_nothing_feeds_block_and_run_fails_where_2_15_failed(tmp_path):
    path, report, placeholders = program(tmp_path, "unfed_input_fn")
    assert (32, "unsupported") in placeholders
    unfed = next(f for f in report.findings if f.line == 32)
    assert "in an input_fn that builds no initializable iterator" in unfed.note
    assert "from_tensor_slices" in unfed.replacement
    assert exit_status([report]) == 1

    done = run_python("-m", "keras_estimator", "run", str(path), cwd=str(tmp_path))
    assert done.returncode != 0
    assert "You must feed a value for placeholder tensor" in done.stderr


def statuses(tmp_path, source):
    path = tmp_path / "inputs.py"
    path.write_text(textwrap.dedent(source))
    (report,) = scan([str(path)])
    return [(f.line, f.api, f.status) for f in report.findings if "placeholder" in f.api]


def test_what_counts_as_an_input_fn(tmp_path):
    assert statuses(
        tmp_path,
        """\
        import functools
        import tensorflow.compat.v1 as tf

        def feed(shape):
            p = tf.placeholder(tf.float32, shape)
            it = tf.data.make_initializable_iterator(tf.data.Dataset.from_tensors(p))
            return it.get_next()

        def by_partial(shape):
            p = tf.placeholder(tf.float32, shape)
            return tf.data.make_initializable_iterator(tf.data.Dataset.from_tensors(p))

        def called_here_too():
            return tf.placeholder(tf.float32)

        def shared():
            return tf.placeholder(tf.float32)

        def eval_fn():
            s = tf.sparse_placeholder(tf.float32)
            shared()
            return tf.data.make_initializable_iterator(tf.data.Dataset.from_tensors(s))

        est.train(lambda: feed([2]))
        est.evaluate(input_fn=functools.partial(by_partial, [3]))
        est.train(called_here_too)
        called_here_too()
        pipeline(eval_input_fn=eval_fn)
        shared()
    """,
    ) == [
        (5, "tf.placeholder", "caveat"),  # only a lambda given to train calls it
        (10, "tf.placeholder", "caveat"),  # functools.partial of it is the input_fn
        (14, "tf.placeholder", "unsupported"),  # also called where it runs eagerly
        (17, "tf.placeholder", "unsupported"),  # also called outside the input_fn
        (20, "tf.sparse_placeholder", "unsupported"),  # refused in words run does not retry
    ]
