"""InMemoryEvaluatorHook: evaluate the training variables as they are, every N steps."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tensorflow as tf

_V1 = tf.compat.v1


class InMemoryEvaluatorHook(tf.compat.v1.train.SessionRunHook):
    """Runs `estimator.evaluate`-style evaluation inside training, without a checkpoint.

    As `tf.estimator.experimental.InMemoryEvaluatorHook`: before training, every
    `every_n_iter` iterations and at the end, the model's current variables are evaluated on
    `input_fn`; results are logged and written to `estimator.eval_dir(name)`.

    Example:
        >>> hook = InMemoryEvaluatorHook(est, eval_input_fn, every_n_iter=500)
        >>> est.train(train_input_fn, hooks=[hook], max_steps=5000)
    """

    def __init__(
        self,
        estimator: Any,
        input_fn: Callable,
        steps: int | None = None,
        hooks: list | None = None,
        name: str | None = None,
        every_n_iter: int = 100,
    ) -> None:
        from keras_estimator.estimator.estimator import Estimator

        if not isinstance(estimator, Estimator):
            raise TypeError(
                f"`estimator` must have type `tf.estimator.Estimator`. Got: {type(estimator)}"
            )
        if not isinstance(every_n_iter, int) or every_n_iter <= 0:
            raise ValueError(
                f"invalid every_n_iter={every_n_iter}. `every_n_iter` must be a positive integer: "
                "evaluate every that many training iterations. "
                f"Received: every_n_iter={every_n_iter!r}"
            )
        config = estimator.config
        if config.num_ps_replicas > 0 or config.num_worker_replicas > 1:
            raise ValueError(
                "InMemoryEvaluator supports only single machine (aka Local) setting. Expected "
                "no ps tasks and one worker in TF_CONFIG. Fix: in a cluster, evaluate with "
                "train_and_evaluate (an evaluator task). Received: "
                f"num_ps_replicas={config.num_ps_replicas}, "
                f"num_worker_replicas={config.num_worker_replicas}"
            )
        self._estimator, self._input_fn = estimator, input_fn
        self._steps, self._hooks, self._name = steps, hooks, name
        self._every = every_n_iter
        self.results: list[dict] = []  # every evaluation's results, in order

    def begin(self) -> None:
        self._iterations = 0
        self._declared = False
        self._global_step = _V1.train.get_global_step()

    def before_run(self, run_context: Any) -> Any:
        # Fetching on evaluation steps makes each of them a real step of its own (the
        # variables evaluated are the ones that step left); the first call declares it.
        if not self._declared or (self._iterations + 1) % self._every == 0:
            self._declared = True
            return _V1.train.SessionRunArgs(self._global_step)
        return None

    def after_create_session(self, session: Any, coord: Any) -> None:
        self._evaluate()  # the metrics before training, as tf.estimator's hook showed

    def after_run(self, run_context: Any, run_values: Any) -> None:
        self._iterations += 1
        if self._iterations % self._every == 0:
            self._evaluate()

    def end(self, session: Any) -> None:
        self._evaluate()

    def _evaluate(self) -> None:
        self.results.append(
            self._estimator._evaluate(
                self._input_fn, self._steps, self._hooks, None, self._name, in_memory=True
            )
        )
