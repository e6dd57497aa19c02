"""`check` agrees with `run` on sessions that run on a graph of their own: TensorFlow's own
TF1 graph mode, which TensorFlow 2.21 still runs. TensorFlow's migration-debugging guide
runs its estimator-style model_fn that way: `with graph.as_default(),
tf.compat.v1.Session(graph=graph) as sess:` (the `with`'s items are entered in order, so the
session opens on `graph`). A session opened before the graph becomes the default is on
another graph, and fails as `check` says."""

from helpers import run_python

from keras_estimator.migration import exit_status, scan

GUIDE = """\
import numpy as np
import tensorflow.compat.v1 as tf


def model_fn(features, labels, mode):
    logits = tf.layers.dense(features, 2)
    loss = tf.losses.softmax_cross_entropy(labels, logits)
    step = tf.train.get_or_create_global_step()
    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


graph = tf.Graph()
with WITH_ITEMS as sess:
    x = tf.placeholder(tf.float32, [None, 3])
    y = tf.placeholder(tf.float32, [None, 2])
    spec = model_fn(x, y, tf.estimator.ModeKeys.TRAIN)
    sess.run(tf.global_variables_initializer())
    for _ in range(3):
        sess.run(spec.train_op, {x: np.ones([4, 3]), y: np.eye(2)[[0, 1, 0, 1]]})
    print("steps ran:", sess.run(tf.train.get_global_step()))
"""


def guide(tmp_path, items):
    path = tmp_path / "debugging_guide.py"
    path.write_text(GUIDE.replace("WITH_ITEMS as sess", items))
    (report,) = scan([str(path)])
    sessions = [(f.line, f.status) for f in report.findings if f.api == "tf.Session"]
    return path, report, sessions


def test_a_session_entered_after_the_graph_in_the_same_with_runs(tmp_path):
    path, report, sessions = guide(tmp_path, "graph.as_default(), tf.Session() as sess")
    assert sessions == [(14, "supported")]
    assert exit_status([report]) == 0
    done = run_python("-m", "keras_estimator", "run", str(path), cwd=str(tmp_path))
    assert done.returncode == 0, done.stderr[-2000:]
    assert "steps ran: 3" in done.stdout


def test_a_session_given_its_graph_runs_wherever_it_is_opened(tmp_path):
    _, report, sessions = guide(tmp_path, "graph.as_default(), tf.Session(graph=graph) as sess")
    assert sessions == [(14, "supported")]
    note = next(f.note for f in report.findings if f.api == "tf.Session")
    assert "graph mode" in note
    source = (
        "import tensorflow.compat.v1 as tf\n"
        "g = tf.Graph()\n"
        "with g.as_default():\n"
        "    x = tf.placeholder(tf.float32)\n"
        "    y = 2 * x\n"
        "sess = tf.Session(graph=g)\n"
        "other = tf.Session('', g)\n"
        "print(sess.run(y, {x: 1.5}), other.run(x, {x: 2.0}))\n"
    )
    path = tmp_path / "explicit_graph.py"
    path.write_text(source)
    (report,) = scan([str(path)])
    assert [(f.line, f.status) for f in report.findings if f.api == "tf.Session"] == [
        (6, "supported"),
        (7, "supported"),
    ]
    assert "a session on a graph of its own (graph=)" in report.findings[1].note
    done = run_python("-m", "keras_estimator", "run", str(path), cwd=str(tmp_path))
    assert done.returncode == 0, done.stderr[-2000:]
    assert "3.0 2.0" in done.stdout


def test_a_session_opened_before_the_graph_is_on_another_graph_and_blocks(tmp_path):
    path, report, sessions = guide(tmp_path, "tf.Session() as sess, graph.as_default()")
    assert sessions == [(14, "unsupported")]
    assert exit_status([report]) == 1
    done = run_python("-m", "keras_estimator", "run", str(path), cwd=str(tmp_path))
    assert done.returncode != 0
    assert "The Session graph is empty" in done.stderr
