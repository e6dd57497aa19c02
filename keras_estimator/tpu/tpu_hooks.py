"""SessionRunHooks of 2.15 TPUEstimator, on keras_estimator's hook loop.

They are ordinary `tf.compat.v1.train.SessionRunHook`s, so they run in any Estimator's
`hooks=` (and TPUEstimatorSpec's `training_hooks=` ...):

- `ExamplesPerSecondHook`: logs (and with a writer, records) global_step/sec and
  examples/sec;
- `InstallSignalHandlerHook`: Ctrl-C kills the process during the call (the default
  handler), restored at the end;
- `TPUStopAtStepHook`: stops at a step and sets the `iterations_per_loop` variable to the
  next loop's step count (estimated for a time budget);
- `SetEvalIterationsHook` / `StoppingPredictHook`: the evaluation and prediction
  counterparts;
- `OutfeedHostCallHook`: runs a host_call's tensors on every step;
- `MultiHostDatasetInitializerHook`: runs dataset initializers once the session exists.
"""

from __future__ import annotations

import logging
import signal
import time
from typing import Any

import tensorflow as tf

from keras_estimator.tpu.loop_control import IterationCountEstimator
from keras_estimator.tpu.tpu_inputs import StopSignals

logger = logging.getLogger("keras_estimator")
_V1 = tf.compat.v1

TPU_ESTIMATOR = "tpu_estimator"
ITERATIONS_PER_LOOP_VAR = "iterations_per_loop"
ITERATIONS_PER_LOOP_COLLECTION = f"{TPU_ESTIMATOR}_{ITERATIONS_PER_LOOP_VAR}"


def create_or_get_iterations_per_loop() -> tf.Variable:
    """The graph's `tpu_estimator/iterations_per_loop` int32 local variable (made once).

    TPUEstimator ran this many steps per `Session.run`; the hooks below set it before each
    loop. Off TPU nothing reads it but the hooks themselves.

    Raises:
        RuntimeError: If the graph holds several such variables.
    """
    graph = _V1.get_default_graph()
    found = graph.get_collection(ITERATIONS_PER_LOOP_COLLECTION)
    if len(found) > 1:
        raise RuntimeError(
            f"The graph holds {len(found)} iterations_per_loop variables; expected one."
        )
    if found:
        return found[0]
    with _V1.variable_scope(TPU_ESTIMATOR, reuse=_V1.AUTO_REUSE):
        return _V1.get_variable(
            ITERATIONS_PER_LOOP_VAR,
            shape=[],
            dtype=tf.int32,
            initializer=_V1.initializers.zeros(),
            trainable=False,
            collections=[ITERATIONS_PER_LOOP_COLLECTION, _V1.GraphKeys.LOCAL_VARIABLES],
            use_resource=True,
        )


class ExamplesPerSecondHook(tf.compat.v1.train.StepCounterHook):
    """Logs global_step/sec and examples/sec (= batch_size * steps/sec); with
    `output_dir` or `summary_writer`, also records both as summaries.

    Args:
        batch_size: Examples per step.
        every_n_steps: Report every this many steps (or `every_n_secs`).
        every_n_secs: Report every this many seconds.
        output_dir: Where a summary writer writes (optional).
        summary_writer: A `tf.compat.v1.summary.FileWriter` (optional).

    Attributes:
        last_rates: The last report: `{"global_step/sec": ..., "examples/sec": ...}`.

    Example:
        >>> est.train(input_fn, steps=1000, hooks=[ExamplesPerSecondHook(batch_size=32)])
    """

    def __init__(
        self,
        batch_size: int,
        every_n_steps: int | None = 100,
        every_n_secs: float | None = None,
        output_dir: str | None = None,
        summary_writer: Any = None,
    ) -> None:
        self._batch_size = batch_size
        self.last_rates: dict[str, float] = {}  # the last report's two rates, by tag
        super().__init__(
            every_n_steps=every_n_steps,
            every_n_secs=every_n_secs,
            output_dir=output_dir,
            summary_writer=summary_writer,
        )

    def _log_and_record(self, elapsed_steps: int, elapsed_time: float, global_step: int) -> None:
        steps_per_sec = elapsed_steps / elapsed_time
        examples_per_sec = self._batch_size * steps_per_sec
        self.last_rates = {"global_step/sec": steps_per_sec, "examples/sec": examples_per_sec}
        if self._summary_writer is not None:
            for tag, value in self.last_rates.items():
                summary = _V1.Summary(value=[_V1.Summary.Value(tag=tag, simple_value=value)])
                self._summary_writer.add_summary(summary, global_step)
        _V1.logging.info("global_step/sec: %g", steps_per_sec)
        _V1.logging.info("examples/sec: %g", examples_per_sec)


class InstallSignalHandlerHook(tf.compat.v1.train.SessionRunHook):
    """During the call, SIGINT (Ctrl-C) gets the default handler, which ends the process
    at once; the handler from before is restored at the end."""

    def __init__(self) -> None:
        self._signal_fn = signal.getsignal(signal.SIGINT)

    def before_run(self, run_context: Any) -> None:
        signal.signal(signal.SIGINT, signal.SIG_DFL)

    def end(self, session: Any) -> None:
        signal.signal(signal.SIGINT, self._signal_fn)


class TPUStopAtStepHook(tf.compat.v1.train.SessionRunHook):
    """Stops at a step, and sets `iterations_per_loop` for each loop to come: the smaller
    of the steps left and the loop size (a count, or the steps estimated to fill the time
    budget of `iterations_per_loop` given in seconds).

    Args:
        iterations_per_loop_counter: `(value, unit)`, unit "count" or "seconds"
            (`util.parse_iterations_per_loop`'s result).
        num_steps: Steps to run from the current one (or `final_step`).
        final_step: The step to stop at.

    Example:
        >>> hook = TPUStopAtStepHook(parse_iterations_per_loop(4), num_steps=10)
    """

    def __init__(self, iterations_per_loop_counter: Any, num_steps: int | None = None,
                 final_step: int | None = None) -> None:  # fmt: skip
        if (num_steps is None) == (final_step is None):
            raise ValueError(
                "Exactly one of `num_steps` or `final_step` must be specified. Received: "
                f"num_steps={num_steps}, final_step={final_step}"
            )
        if iterations_per_loop_counter.unit not in ("seconds", "count"):
            raise ValueError(
                "Only `count` or `seconds` are accepted as the iterations_per_loop_counter "
                f"unit; got {iterations_per_loop_counter.unit!r}."
            )
        self._iterations_per_loop_counter = iterations_per_loop_counter
        self._num_steps = num_steps
        self._final_step = final_step
        self._next_iteration_count = 1
        self._iteration_count_estimator = (
            IterationCountEstimator() if iterations_per_loop_counter.unit == "seconds" else None
        )
        self._start_time = time.time()

    def _next_iterations(self, global_step: int, final_step: int) -> int:
        if self._iteration_count_estimator is not None:
            loop = self._iteration_count_estimator.get(self._iterations_per_loop_counter.value)
        else:
            loop = self._iterations_per_loop_counter.value
        self._next_iteration_count = int(min(final_step - global_step, loop))
        return self._next_iteration_count

    def begin(self) -> None:
        self._global_step_tensor = _V1.train.get_global_step()
        if self._global_step_tensor is None:
            raise RuntimeError("Global step should be created to use TPUStopAtStepHook.")
        self._iterations_per_loop_var = create_or_get_iterations_per_loop()

    def after_create_session(self, session: Any, coord: Any) -> None:
        global_step = int(session.run(self._global_step_tensor))
        if self._final_step is None:
            assert self._num_steps is not None  # __init__: exactly one of the two is set
            self._final_step = global_step + self._num_steps
        iterations = self._next_iterations(global_step, self._final_step)
        self._iterations_per_loop_var.load(iterations, session=session)

    def before_run(self, run_context: Any) -> None:
        if self._iteration_count_estimator is not None:
            self._start_time = time.time()

    def after_run(self, run_context: Any, run_values: Any) -> None:
        if self._iteration_count_estimator is not None:
            self._iteration_count_estimator.update(
                time.time() - self._start_time, self._next_iteration_count
            )
        assert self._final_step is not None  # set by after_create_session
        global_step = int(run_context.session.run(self._global_step_tensor))
        if global_step >= self._final_step:
            run_context.request_stop()
        else:
            iterations = self._next_iterations(global_step, self._final_step)
            self._iterations_per_loop_var.load(iterations, session=run_context.session)


class SetEvalIterationsHook(tf.compat.v1.train.SessionRunHook):
    """Sets `iterations_per_loop` to the evaluation's step count once the session exists.

    Args:
        num_steps: The evaluation steps.
    """

    def __init__(self, num_steps: int) -> None:
        self._num_steps = num_steps

    def begin(self) -> None:
        self._iterations_per_loop_var = create_or_get_iterations_per_loop()

    def after_create_session(self, session: Any, coord: Any) -> None:
        self._iterations_per_loop_var.load(self._num_steps, session=session)


class StoppingPredictHook(tf.compat.v1.train.SessionRunHook):
    """Ends prediction at the batch whose stopping signal is set (the batch
    `InputsWithStoppingSignals` appended): raises OutOfRangeError in after_run, so that
    batch's predictions are dropped. A `tf.compat.v1.train.MonitoredSession` ends on that
    error; keras_estimator's `Estimator.predict` does not treat it as the end of input, so
    there the error leaves `predict` after the last real batch's predictions.

    Args:
        scalar_stopping_signal: The step's scalar stopping-signal tensor.
    """

    def __init__(self, scalar_stopping_signal: Any) -> None:
        self._scalar_stopping_signal = scalar_stopping_signal

    def begin(self) -> None:
        self._iterations_per_loop_var = create_or_get_iterations_per_loop()

    def after_create_session(self, session: Any, coord: Any) -> None:
        self._iterations_per_loop_var.load(1, session=session)

    def before_run(self, run_context: Any) -> Any:
        return _V1.train.SessionRunArgs(self._scalar_stopping_signal)

    def after_run(self, run_context: Any, run_values: Any) -> None:
        if StopSignals.should_stop(run_values.results):
            raise tf.errors.OutOfRangeError(None, None, "Stopped by stopping signal.")


class OutfeedHostCallHook(tf.compat.v1.train.SessionRunHook):
    """Runs a host_call's tensors (or ops) on every step, as TPUEstimator did off TPU.

    Args:
        tensors: What the host_call function returned (a structure of tensors / ops).
    """

    def __init__(self, tensors: Any) -> None:
        self._tensors = tensors

    def before_run(self, run_context: Any) -> Any:
        return _V1.train.SessionRunArgs(self._tensors)


class MultiHostDatasetInitializerHook(tf.compat.v1.train.SessionRunHook):
    """Runs dataset iterator initializers once the session exists.

    Args:
        dataset_initializers: The initializer ops (or a list of them).
    """

    def __init__(self, dataset_initializers: Any) -> None:
        self._initializers = dataset_initializers

    def after_create_session(self, session: Any, coord: Any) -> None:
        start = time.time()
        session.run(self._initializers)
        logger.info("Initialized dataset iterators in %d seconds", time.time() - start)
