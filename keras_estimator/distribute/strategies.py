"""RunConfig -> tf.distribute strategy, and the bits of tf.distribute the engine needs.

`RunConfig(train_distribute=..., eval_distribute=...)` (or `experimental_distribute=
DistributeConfig(...)`) names the strategy; the Estimator builds its variables under it
once. As in tf.estimator, input_fn runs once per input pipeline with an InputContext and
its batches are per-replica batches; predict() never ran under a strategy.
"""

from __future__ import annotations

import logging
from typing import Any

import tensorflow as tf

from keras_estimator.distribute import parameter_servers
from keras_estimator.seam.internals import iterator_type_spec
from keras_estimator.spec.run_config import TaskType

logger = logging.getLogger("keras_estimator")


# eval_distribute strategies that evaluate per replica on split input (one machine's devices);
# a multi-worker strategy's evaluation runs on the task that calls it, undistributed.
_EVAL_DISTRIBUTED = (tf.distribute.MirroredStrategy, tf.distribute.OneDeviceStrategy)


def strategy_of(config: Any) -> tuple[tf.distribute.Strategy | None, frozenset[str]]:
    """The one strategy the Estimator's variables live under, and the modes it runs.

    Training runs distributed. Evaluation too when eval_distribute is the same one-machine
    strategy (each replica evaluates its own batches, the metrics summed across replicas);
    otherwise it reads the same (mirrored) variables without splitting its batches, which
    gives the same metrics. predict() never used a strategy.
    """
    train, evaluate = config.train_distribute, config.eval_distribute
    distribute = config.experimental_distribute
    if distribute is not None:
        train = train or getattr(distribute, "train_distribute", None)
        evaluate = evaluate or getattr(distribute, "eval_distribute", None)
    for name, strategy in (("train_distribute", train), ("eval_distribute", evaluate)):
        if strategy is not None and not isinstance(strategy, tf.distribute.Strategy):
            raise ValueError(
                f"RunConfig {name} must be a tf.distribute.Strategy, given: {strategy!r}. "
                "Fix: pass e.g. tf.distribute.MirroredStrategy(). "
                f"Received: type({name})={type(strategy).__name__}"
            )
    if train is not None and evaluate is not None and train is not evaluate:
        raise NotImplementedError(
            "RunConfig train_distribute and eval_distribute are different strategies; "
            "keras_estimator keeps one set of variables under one strategy. Expected the "
            "same strategy object for both. Fix: pass the same object, or eval_distribute=None. "
            f"Received: train_distribute={type(train).__name__}, "
            f"eval_distribute={type(evaluate).__name__}"
        )
    if (
        train is not None
        and parameter_servers.has_parameter_servers(config)
        and not parameter_servers.is_parameter_server_strategy(train)
    ):
        raise ValueError(
            f"TF_CONFIG names ps tasks, but RunConfig train_distribute is a "
            f"{type(train).__name__}, which does not use parameter servers. Expected "
            "train_distribute=None: keras_estimator then makes the ParameterServerStrategy "
            "(RunConfig refuses one passed in, as tf.estimator 2.15 did). Fix: pass "
            "train_distribute=None, or drop "
            f"the ps tasks from TF_CONFIG. Received: train_distribute={type(train).__name__}"
        )
    if train is None and parameter_servers.has_parameter_servers(config):
        if config.task_type not in (TaskType.CHIEF, TaskType.MASTER):
            return None, frozenset()  # workers and ps tasks serve the chief's steps
        train = parameter_servers.make_parameter_server_strategy()
    if parameter_servers.is_parameter_server_strategy(train) and evaluate is train:
        evaluate = None  # evaluation runs on the coordinator (tf.estimator had no PS eval)
    if train is None and evaluate is not None:
        logger.info(
            "RunConfig eval_distribute without train_distribute: evaluation runs without a "
            "strategy (the metrics are the same)."
        )
        return None, frozenset()
    strategy = train
    modes = {"train"} if strategy is not None else set()
    if evaluate is not None and isinstance(evaluate, _EVAL_DISTRIBUTED):
        modes.add("eval")  # each replica evaluates its batches, as tf.estimator did
    elif evaluate is not None:
        logger.info(
            "Evaluation runs on the %s's variables without distributing its batches "
            "(eval_distribute): the metrics are the same as tf.estimator's.",
            type(evaluate).__name__,
        )
    if strategy is not None:
        logger.info("Initializing RunConfig with distribution strategies.")
        logger.info("Using %s with %d replicas.", type(strategy).__name__,
                    strategy.num_replicas_in_sync)  # fmt: skip
    return strategy, frozenset(modes)


def iterator_spec(dataset: Any) -> tf.TypeSpec:
    """The type spec of an iterator over `dataset` (a tf.data or distributed dataset)."""
    if isinstance(dataset, tf.data.Dataset):
        return tf.data.IteratorSpec(dataset.element_spec)
    # A per-worker iterator (ParameterServerStrategy): a scheduled step gets one worker's.
    return iterator_type_spec(iter(dataset))


def first_replica(value: Any, strategy: tf.distribute.Strategy) -> Any:
    """Replica 0's part of a per-replica structure (what tf.estimator showed hooks)."""
    return tf.nest.map_structure(lambda v: strategy.experimental_local_results(v)[0], value)
