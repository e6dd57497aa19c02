"""ChunkedLoop as a unit, over a step that adds its batch to a variable: chunks of
`num_steps`, the input's end inside a chunk, the first steps run alone before the loop is
traced, and a run's first non-finite loss reported where it happened."""

import numpy as np
import tensorflow as tf

from keras_estimator.engine.loops import ChunkedLoop, TracedStep


def _loop(values, steps_before_tracing=0, report_non_finite_loss=False):
    total = tf.Variable(0.0)
    global_step = tf.Variable(0, dtype=tf.int64)

    @tf.function(autograph=False)
    def step(batch):
        with tf.control_dependencies([total.assign_add(batch), global_step.assign_add(1)]):
            return {"loss": tf.identity(batch), "global_step": global_step.read_value()}

    spec = tf.TensorSpec([], tf.float32)
    traced = TracedStep.of(step.get_concrete_function(spec), fn=step)
    loop = ChunkedLoop(step, traced.specs, traced, steps_before_tracing=steps_before_tracing,
                       report_non_finite_loss=report_non_finite_loss)  # fmt: skip
    iterator = iter(tf.data.Dataset.from_tensor_slices(np.asarray(values, np.float32)))
    return loop, iterator, total


def test_chunks_run_the_steps_asked_for_until_the_input_ends():
    loop, iterator, total = _loop([1.0, 2.0, 3.0, 4.0, 5.0])
    ran, outputs = loop(iterator, tf.constant(2, tf.int64))
    assert int(ran) == 2 and float(outputs["loss"]) == 2.0 and float(total) == 3.0
    ran, outputs = loop(iterator, tf.constant(10, tf.int64))  # the input ends inside it
    assert int(ran) == 3 and int(outputs["global_step"]) == 5 and float(total) == 15.0
    ran, _ = loop(iterator, tf.constant(10, tf.int64))
    assert int(ran) == 0


def test_the_first_steps_run_alone_and_the_loop_is_traced_only_when_needed():
    loop, iterator, total = _loop([1.0, 2.0, 3.0, 4.0, 5.0], steps_before_tracing=2)
    ran, _ = loop(iterator, tf.constant(2, tf.int64))
    assert int(ran) == 2 and not loop._traced  # a call of two steps: both from Python
    ran, outputs = loop(iterator, tf.constant(3, tf.int64))
    assert int(ran) == 3 and loop._traced and float(total) == 15.0  # two alone, one looped
    assert float(outputs["loss"]) == 5.0


def test_a_run_reports_its_first_non_finite_loss_and_the_step_it_came_at():
    loop, iterator, _ = _loop([1.0, np.inf, 3.0, np.nan], report_non_finite_loss=True)
    ran, outputs = loop(iterator, tf.constant(4, tf.int64))
    assert int(ran) == 4  # the compiled run goes on; what it reports is the first one
    assert np.isinf(float(outputs["loss"])) and int(outputs["global_step"]) == 2
