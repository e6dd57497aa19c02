"""A hook's `session.run(tensor)` outside the step (in `end()`): a tensor computed from
variables alone is computed from their values now, as TF1's session gave it (AdaNet's
evaluation hooks write metric values so); one that needs the step's input is refused."""

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as estimator
from keras_estimator.runtime.event_files import read_scalars

v1 = tf.compat.v1


class _EndReader(v1.train.SessionRunHook):
    def __init__(self, value, needs_input):
        self.value, self.needs_input, self.read, self.refused = value, needs_input, None, None

    def end(self, session):
        self.read = session.run(self.value)
        with pytest.raises(ValueError, match="cannot be computed outside the step") as refused:
            session.run(self.needs_input)
        self.refused = str(refused.value)


def test_a_hook_reads_a_metric_value_in_end_and_not_a_tensor_of_the_input(tmp_path):
    hooks = []

    def model_fn(features, labels, mode):
        w = v1.get_variable("w", [2, 1])
        predictions = tf.matmul(features["x"], w)[:, 0]
        loss = tf.reduce_mean(tf.square(predictions - labels))
        mean = v1.metrics.mean(predictions)
        hooks.append(_EndReader(mean[0], predictions))
        train_op = v1.train.GradientDescentOptimizer(0.1).minimize(loss, v1.train.get_global_step())
        return estimator.EstimatorSpec(mode, loss=loss, train_op=train_op,
                                       eval_metric_ops={"mean": mean},
                                       evaluation_hooks=[hooks[-1]])  # fmt: skip

    x = np.arange(16, dtype="float32").reshape(8, 2)
    est = estimator.Estimator(model_fn, model_dir=str(tmp_path))

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": x}, x[:, 0])).batch(4)

    est.train(input_fn, steps=1)
    metrics = est.evaluate(input_fn)
    assert hooks[-1].read == pytest.approx(metrics["mean"])
    assert "MatMul" in hooks[-1].refused or "input" in hooks[-1].refused


def test_a_traced_tensor_is_recomputed_from_the_variables_values_now():
    from keras_estimator.seam.internals import recomputed_from_variables

    total, count = tf.Variable(6.0), tf.Variable(3.0)

    @tf.function(autograph=False)
    def step(x):
        with tf.control_dependencies([total.assign_add(x), count.assign_add(1.0)]):
            return tf.math.divide_no_nan(total.read_value(), count.read_value()), x * 2.0

    mean, doubled = step.get_concrete_function(tf.TensorSpec([], tf.float32)).outputs
    compute = recomputed_from_variables(mean)
    assert float(compute()) == 2.0
    total.assign(10.0)
    assert float(compute()) == pytest.approx(10.0 / 3.0)  # the values now, no step run
    with pytest.raises(ValueError, match="the step's input"):
        recomputed_from_variables(doubled)


class _SummaryAtEnd(v1.train.SessionRunHook):
    """Writes a summary with a TF1 FileWriter in end(), as AdaNet's evaluation hooks do."""

    def __init__(self, directory):
        self.directory = directory

    def end(self, session):
        step = session.run(v1.train.get_global_step())
        writer = v1.summary.FileWriterCache.get(self.directory)
        writer.add_summary(v1.Summary(value=[v1.Summary.Value(tag="t", simple_value=1.5)]), step)
        writer.flush()


def test_a_hooks_end_runs_with_the_traced_graph_as_the_default(tmp_path):
    def model_fn(features, labels, mode):
        w = v1.get_variable("w", [])
        loss = tf.square(w - features["x"][0])
        train_op = v1.train.GradientDescentOptimizer(0.1).minimize(loss, v1.train.get_global_step())
        return estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

    est = estimator.Estimator(model_fn, model_dir=str(tmp_path / "model"))
    x = np.ones(4, "float32")
    hook = _SummaryAtEnd(str(tmp_path / "written"))
    est.train(lambda: tf.data.Dataset.from_tensor_slices({"x": x}).batch(1), hooks=[hook])
    assert read_scalars(str(tmp_path / "written")) == {4: {"t": 1.5}}


class _Overwrite(v1.train.SessionRunHook):
    """Before the first step: restores `w` from `source`, sets `counter` with an assign op
    built in begin(), and writes every variable to `target` with a Saver of its own (what
    AdaNet's checkpoint overwrite at a new iteration does)."""

    def __init__(self, source, target):
        self.source, self.target, self.done = source, target, False

    def begin(self):
        (w,) = [v for v in v1.global_variables() if v.name.startswith("w")]
        (counter,) = [v for v in v1.global_variables() if v.name.startswith("counter")]
        self.restore = v1.train.Saver(var_list={"w": w})
        self.assign = counter.assign(7.0)
        self.save = v1.train.Saver(sharded=True)

    def before_run(self, run_context):
        if not self.done:
            self.restore.restore(run_context.session, self.source)
            run_context.session.run(self.assign)
            self.save.save(run_context.session, self.target, global_step=1)
            self.done = True


def test_a_hook_restores_assigns_and_saves_with_savers_of_its_own(tmp_path):
    def model_fn(features, labels, mode):
        w = v1.get_variable("w", [], initializer=v1.zeros_initializer())
        counter = v1.get_variable("counter", [], initializer=v1.zeros_initializer())
        loss = tf.square(w - features["x"][0]) + 0.0 * counter
        train_op = v1.train.GradientDescentOptimizer(0.1).minimize(loss, v1.train.get_global_step())
        return estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

    source = tmp_path / "source"
    with tf.Graph().as_default():
        w = v1.get_variable("w", [], initializer=v1.constant_initializer(5.0))
        with v1.Session() as session:
            session.run(w.initializer)
            path = v1.train.Saver([w]).save(session, str(source / "model.ckpt"))
    (tmp_path / "grown").mkdir()  # a Saver writes into an existing directory (TF1's too)
    hook = _Overwrite(path, str(tmp_path / "grown" / "increment.ckpt"))
    est = estimator.Estimator(model_fn, model_dir=str(tmp_path / "model"))
    est.train(lambda: tf.data.Dataset.from_tensors({"x": np.ones(1, "float32")}), hooks=[hook])
    written = tf.train.latest_checkpoint(str(tmp_path / "grown"))
    assert written.endswith("increment.ckpt-1")
    values = dict(tf.train.list_variables(written))
    assert {"w", "counter", "global_step"} <= set(values)
    assert tf.train.load_variable(written, "w") == 5.0  # restored before the step
    assert tf.train.load_variable(written, "counter") == 7.0  # the hook's assign ran
