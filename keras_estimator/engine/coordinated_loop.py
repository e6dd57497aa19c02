"""The training loop under ParameterServerStrategy: steps scheduled onto the workers.

TF keeps one ClusterCoordinator per strategy, so constructing it again returns it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tensorflow as tf

from keras_estimator.engine.loops import TracedStep, one_step_function
from keras_estimator.engine.output_keys import GLOBAL_STEP_KEY, HOOKS_KEY


class CoordinatedLoop:
    """The training loop under ParameterServerStrategy: steps scheduled onto the workers.

    A call schedules `num_steps` steps, waits for them and returns the last one's outputs,
    as the other loops do, with the global step read after all of them. When a worker's
    input ends, the call ends with the steps that ran (counted by the global step). When a
    worker fails, TF's coordinator runs its steps on the other workers.
    """

    def __init__(
        self,
        step_fn: Callable | None,
        global_step: tf.Variable,
        strategy: Any,
        concrete: Any = None,
    ) -> None:
        """`concrete`: the step to schedule, already traced (default: `step_fn` on
        `next(iterator)`, traced by `get_concrete_function`); a loop of hook fetches is
        given it and no `step_fn`."""
        self._global_step = global_step
        self._strategy = strategy
        self._coordinator = tf.distribute.experimental.coordinator.ClusterCoordinator(strategy)
        # The tf.function of one step that get_concrete_function traces.
        self._one: Any = one_step_function(step_fn) if step_fn is not None else None
        self._concrete: Any = concrete
        self._last: Any = None
        self._fetching: dict[tuple, CoordinatedLoop] = {}

    def get_concrete_function(self, iterator_spec: Any, steps_spec: Any = None) -> Any:
        # Traced here, inside the Estimator's variable creator, once: scheduling the
        # concrete function never traces the model_fn again (outside that creator).
        self._concrete = self._one.get_concrete_function(iterator_spec)
        return self._concrete

    @property
    def step_ops(self) -> list:
        return list(self._concrete.graph.control_outputs) if self._concrete is not None else []

    def with_fetches(self, extra: dict[str, tf.Tensor]) -> CoordinatedLoop:
        """The same scheduled step, also returning `extra` (pruned from the same trace)."""
        key = tuple(sorted((name, id(t)) for name, t in extra.items()))
        loop = self._fetching.get(key)
        if loop is None:
            run = TracedStep.of(self._concrete).with_fetches(extra)
            spec = self._concrete.structured_input_signature[0][0]

            def step(iterator: Any) -> dict:
                outputs, values = run(iterator)
                return dict(outputs, **{HOOKS_KEY: values})

            concrete = tf.function(step, autograph=False).get_concrete_function(spec)
            loop = self._fetching[key] = CoordinatedLoop(
                None, self._global_step, self._strategy, concrete=concrete
            )
        return loop

    def __call__(
        self, iterator: Any, num_steps: tf.Tensor, endless: bool = False, whole_call: bool = False
    ) -> tuple[tf.Tensor, Any]:
        steps = int(num_steps)
        before = int(self._global_step.numpy())
        try:
            results = [
                self._coordinator.schedule(self._concrete, args=(iterator,)) for _ in range(steps)
            ]
            self._coordinator.join()
            outputs = tf.nest.map_structure(tf.constant, results[-1].fetch())
        except (tf.errors.OutOfRangeError, StopIteration):
            ran = int(self._global_step.numpy()) - before
            if self._last is None:
                raise
            last = dict(self._last, **{GLOBAL_STEP_KEY: self._global_step.read_value()})
            return tf.constant(ran, tf.int64), last
        # Steps run concurrently on the workers: the last one scheduled need not finish last,
        # so the global step it read can be behind. The variable itself counts every step
        # (a step that a failed worker had applied may have run again elsewhere: TF's
        # coordinator runs a step at least once).
        now = self._global_step.read_value()
        outputs = dict(outputs, **{GLOBAL_STEP_KEY: now})
        self._last = outputs
        return tf.constant(max(int(now) - before, steps), tf.int64), outputs
