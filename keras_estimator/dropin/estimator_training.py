"""TensorFlow 2.15's `tensorflow.python.distribute.estimator_training`, which went with the
estimator in TF 2.16 (EasyRec imports it): under `install()` the module path imports as
this one.

2.15 ran a TF_CONFIG cluster through its distribute coordinator here. keras_estimator runs
distribution through RunConfig's strategy (`train_and_evaluate` reads the task's role
itself), so there is never a coordinator to run: `should_run_distribute_coordinator` is
False, and the entry points hand the call to keras_estimator's `train_and_evaluate`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

CHIEF = "chief"
EVALUATOR = "evaluator"
PS = "ps"
WORKER = "worker"


def should_run_distribute_coordinator(config: Any) -> bool:
    """False: keras_estimator needs no distribute coordinator (see the module doc)."""
    del config
    return False


def init_run_config(config: Any, tf_config: dict) -> None:
    """Nothing to set up: RunConfig reads TF_CONFIG itself (2.15 prepared the coordinator)."""
    del config, tf_config


def train_and_evaluate(estimator: Any, train_spec: Any, eval_spec: Any,
                       executor_cls: Any = None) -> Any:  # fmt: skip
    """keras_estimator's `train_and_evaluate`, for every task of a cluster.

    Example:
        >>> estimator_training.train_and_evaluate(est, train_spec, eval_spec, None)
    """
    del executor_cls
    from keras_estimator.training.train_and_evaluate import train_and_evaluate as run

    return run(estimator, train_spec, eval_spec)


def estimator_train(estimator: Any, train_distributed_fn: Callable, hooks: Any) -> Any:
    """Trains through `train_distributed_fn(hooks)`, with no coordinator around it."""
    del estimator
    return train_distributed_fn(hooks)


def estimator_evaluate(estimator: Any, evaluate_distributed_fn: Callable, hooks: Any) -> Any:
    """Evaluates through `evaluate_distributed_fn(hooks)`, with no coordinator around it."""
    del estimator
    return evaluate_distributed_fn(hooks)
