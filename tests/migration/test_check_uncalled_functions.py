"""`check` judges what a script runs: a blocking use inside a function nothing in the
script calls (a debugging helper beside `main()`) is a caveat, and `run` runs the script;
once something calls it, it blocks again, and `run` fails there."""

import textwrap

from helpers import run_python

from keras_estimator.migration import exit_status, scan

SCRIPT = '''\
import numpy as np
import tensorflow.compat.v1 as tf


def model_fn(features, labels, mode):
    w = tf.get_variable("w", [1, 1])
    loss = tf.reduce_mean(tf.square(tf.matmul(features["x"], w) - labels))
    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(
        loss, global_step=tf.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def input_fn():
    x = np.ones([8, 1], np.float32)
    return tf.data.Dataset.from_tensor_slices(({"x": x}, 2 * x)).batch(4).repeat()


def debug_one_step():
    """Never called when the script runs (a helper for an interactive session)."""
    loss = debug_loss()
    with tf.Session() as sess:
        print(sess.run(loss))


def debug_loss():
    return tf.constant(1.0)


def main():
    est = tf.estimator.Estimator(model_fn, model_dir=MODEL_DIR)
    est.train(input_fn, steps=3)
    print("trained to", est.get_variable_value("global_step"))
    CALL


if __name__ == "__main__":
    main()
'''


def write_script(tmp_path, call=""):
    path = tmp_path / "train.py"
    source = SCRIPT.replace("MODEL_DIR", repr(str(tmp_path / "model")))
    path.write_text(source.replace("CALL", call or "pass"))
    return path


def test_a_session_in_a_function_nothing_calls_is_a_caveat_and_run_runs_the_script(tmp_path):
    path = write_script(tmp_path)
    (report,) = scan([str(path)])
    session = next(f for f in report.findings if f.api == "tf.Session")
    assert session.status == "caveat"
    assert "in debug_one_step(), which nothing in this script calls" in session.note
    assert "No sessions" in session.note  # what would happen if it were called
    assert exit_status([report]) == 0

    done = run_python("-m", "keras_estimator", "run", str(path), cwd=str(tmp_path))
    assert done.returncode == 0, done.stdout[-2000:]
    assert "trained to 3" in done.stdout


def test_once_main_calls_it_the_session_blocks_and_run_fails_there(tmp_path):
    path = write_script(tmp_path, call="debug_one_step()")
    (report,) = scan([str(path)])
    session = next(f for f in report.findings if f.api == "tf.Session")
    assert session.status == "unsupported" and exit_status([report]) == 1

    done = run_python("-m", "keras_estimator", "run", str(path), cwd=str(tmp_path))
    assert done.returncode != 0
    assert "trained to 3" in done.stdout  # the estimator ran; the session call did not
    assert "Session graph is empty" in done.stderr


def test_only_a_scripts_top_level_functions_count(tmp_path):
    # A module's functions may be called by its importers; methods and nested functions
    # are called by frameworks (a hook's before_run) without being named.
    module = tmp_path / "helpers_module.py"
    module.write_text(
        textwrap.dedent("""\
        import tensorflow.compat.v1 as tf

        def open_session():
            return tf.Session()
    """)
    )
    (report,) = scan([str(module)])
    assert [f.status for f in report.findings if f.api == "tf.Session"] == ["unsupported"]

    script = tmp_path / "hooks_script.py"
    script.write_text(
        textwrap.dedent("""\
        import tensorflow.compat.v1 as tf

        class Hook(tf.train.SessionRunHook):
            def end(self, session):
                tf.Session()

        def outer():
            def inner():
                return tf.Session()
            return inner

        def by_name():
            return tf.Session()

        @REGISTRY.register
        def registered():
            return tf.Session()

        HANDLERS = {"by_name": "by_name"}

        if __name__ == "__main__":
            outer()
            getattr(__import__(__name__), HANDLERS["by_name"])()
    """)
    )
    (report,) = scan([str(script)])
    assert [(f.line, f.status) for f in report.findings if f.api == "tf.Session"] == [
        (5, "unsupported"),  # a method: a framework calls it
        (9, "unsupported"),  # nested in a function the script calls
        (13, "unsupported"),  # named by a string: may be called through it
        (17, "unsupported"),  # decorated: what its decorator registers may be called
    ]


def test_main_and_names_looked_up_at_run_time_count_as_called(tmp_path):
    def session_statuses(source):
        path = tmp_path / "job.py"
        path.write_text(textwrap.dedent(source))
        (report,) = scan([str(path)])
        return [f.status for f in report.findings if f.api == "tf.Session"]

    # tf.app.run() calls the module's main without naming it.
    assert session_statuses("""\
        import tensorflow.compat.v1 as tf

        def main(_):
            tf.Session()

        if __name__ == "__main__":
            tf.app.run()
    """) == ["unsupported"]
    # A function reached through a computed name: nothing in the script is judged uncalled.
    assert session_statuses("""\
        import tensorflow.compat.v1 as tf
        MODE = "train"

        def run_train():
            tf.Session()

        if __name__ == "__main__":
            globals()["run_" + MODE]()
    """) == ["unsupported"]


def test_a_script_that_another_checked_file_imports_is_judged_as_a_module(tmp_path):
    (tmp_path / "lib_with_self_test.py").write_text(
        textwrap.dedent("""\
        import tensorflow.compat.v1 as tf

        def open_session():
            return tf.Session()

        if __name__ == "__main__":
            print("self-test")
    """)
    )
    (tmp_path / "entry.py").write_text(
        textwrap.dedent("""\
        import lib_with_self_test

        if __name__ == "__main__":
            lib_with_self_test.open_session()
    """)
    )
    alone = scan([str(tmp_path / "lib_with_self_test.py")])
    assert [f.status for r in alone for f in r.findings if f.api == "tf.Session"] == ["caveat"]
    reports = scan([str(tmp_path / "entry.py")])  # follows the import
    (library,) = [r for r in reports if r.path.endswith("lib_with_self_test.py")]
    assert [f.status for f in library.findings if f.api == "tf.Session"] == ["unsupported"]
    assert exit_status(reports) == 1
    both = scan([str(tmp_path / "entry.py"), str(tmp_path / "lib_with_self_test.py")])
    assert exit_status(both) == 1


RANKING_METRICS = """\
import tensorflow.compat.v1 as tf


def mean_score(labels, predictions):
    return tf.metrics.mean(predictions)


def eval_metric(metric_fn, **kwargs):
    # A stand-alone helper for an interactive session (as TF-Ranking's tfr.metrics.eval_metric;
    # this one builds the metric eagerly, outside the session's graph: it fails if called).
    metric_op, update_op = metric_fn(**kwargs)
    with tf.Session() as sess:
        sess.run(update_op)
        return sess.run(metric_op)
"""
RANKING_LOSSES = """\
import tensorflow.compat.v1 as tf


class LossKey:
    SQUARED = "squared"

    @classmethod
    def all_keys(cls):
        return [v for k, v in vars(cls).items() if k.isupper()]


class SquaredLoss:
    def eval_metric(self, labels, predictions):
        return tf.metrics.mean_squared_error(labels, predictions)


def make_loss_metric_fn(key):
    losses = {LossKey.SQUARED: SquaredLoss()}

    def metric_fn(labels, predictions):
        loss = losses.get(key)
        return loss.eval_metric(labels, predictions)  # the method, not metrics.eval_metric

    return metric_fn
"""
RANKING_EXAMPLE = """\
import numpy as np
import tensorflow.compat.v1 as tf

from ranking import losses, metrics


def model_fn(features, labels, mode):
    predictions = tf.layers.dense(features["x"], 1)
    loss = tf.losses.mean_squared_error(labels, predictions)
    train_op = tf.train.GradientDescentOptimizer(0.01).minimize(
        loss, global_step=tf.train.get_global_step())
    metric_fn = losses.make_loss_metric_fn(losses.LossKey.all_keys()[0])
    eval_ops = {"mse": metric_fn(labels, predictions),
                "mean": metrics.mean_score(labels, predictions)}
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op,
                                      eval_metric_ops=eval_ops)


def input_fn():
    x = np.ones([8, 1], np.float32)
    return tf.data.Dataset.from_tensor_slices(({"x": x}, 2 * x)).batch(4)


if __name__ == "__main__":
    est = tf.estimator.Estimator(model_fn, model_dir=MODEL_DIR)
    est.train(input_fn, steps=2)
    print("evaluated:", sorted(est.evaluate(input_fn)))
    CALL
"""


def ranking_program(tmp_path, call="pass"):
    package = tmp_path / "ranking"
    package.mkdir(exist_ok=True)
    (package / "__init__.py").write_text("")
    (package / "metrics.py").write_text(RANKING_METRICS)
    (package / "losses.py").write_text(RANKING_LOSSES)
    script = tmp_path / "example.py"
    source = RANKING_EXAMPLE.replace("MODEL_DIR", repr(str(tmp_path / "model")))
    script.write_text(source.replace("CALL", call))
    reports = scan([str(script)])
    (metrics,) = [r for r in reports if r.path.endswith("metrics.py")]
    return script, reports, [f for f in metrics.findings if f.api == "tf.Session"]


def test_a_library_helper_nothing_calls_stays_a_caveat_beside_a_method_of_its_name(tmp_path):
    # The library's `vars(cls)` reads a class's attributes, and `loss.eval_metric(...)` calls
    # a method: neither reaches metrics.eval_metric, the TF-Ranking examples' blocked helper.
    script, reports, (session,) = ranking_program(tmp_path)
    assert session.status == "caveat"
    assert "in eval_metric(), which nothing in this program calls" in session.note
    assert exit_status(reports) == 0

    done = run_python("-m", "keras_estimator", "run", str(script), cwd=str(tmp_path))
    assert done.returncode == 0, done.stderr[-2000:]
    assert "evaluated: ['global_step', 'loss', 'mean', 'mse']" in done.stdout


def test_the_helper_called_through_its_module_or_an_alias_blocks_and_run_fails(tmp_path):
    call = "metrics.eval_metric(lambda: (tf.constant(1.0), tf.constant(2.0)))"
    script, reports, (session,) = ranking_program(tmp_path, call)
    assert session.status == "unsupported" and exit_status(reports) == 1
    done = run_python("-m", "keras_estimator", "run", str(script), cwd=str(tmp_path))
    assert done.returncode != 0
    assert "evaluated:" in done.stdout  # the estimator ran; the helper's session did not
    assert "Session graph is empty" in done.stderr

    aliased = "m = metrics\n    m.eval_metric(print)"  # `m` may be the module: counted
    _, reports, (session,) = ranking_program(tmp_path, aliased)
    assert session.status == "unsupported"
