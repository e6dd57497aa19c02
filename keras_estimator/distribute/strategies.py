"""RunConfig -> tf.distribute strategy, and the bits of tf.distribute the engine needs.

`RunConfig(train_distribute=..., eval_distribute=...)` (or `experimental_distribute=
DistributeConfig(...)`) names the strategies; the Estimator builds its variables under
train_distribute once, and evaluation's under eval_distribute when that is another one.
As in tf.estimator, input_fn runs once per input pipeline with an InputContext and
its batches are per-replica batches; predict() never ran under a strategy.
"""

from __future__ import annotations

import logging
from typing import Any

import tensorflow as tf

from keras_estimator.distribute import parameter_servers
from keras_estimator.seam import internals
from keras_estimator.seam.internals import iterator_type_spec
from keras_estimator.spec.run_config import TaskType

logger = logging.getLogger("keras_estimator")


# eval_distribute strategies that evaluate per replica on split input (one machine's devices);
# a multi-worker strategy's evaluation runs on the task that calls it, undistributed.
_EVAL_DISTRIBUTED = (tf.distribute.MirroredStrategy, tf.distribute.OneDeviceStrategy)


# The TF2 strategy a tf.compat.v1.distribute one stands for, kept on the v1 object so every
# look-up of the same RunConfig gives the same strategy (its variables live under it).
_V2_ATTR = "_keras_estimator_v2_strategy"


def _as_v2(strategy: Any) -> Any:
    """A `tf.compat.v1.distribute` MirroredStrategy / OneDeviceStrategy (2.15's Estimator
    ran those too) as the TF 2 strategy over the same devices; anything else as given.

    Example:
        >>> _as_v2(tf.compat.v1.distribute.MirroredStrategy())  # a tf.distribute one
    """
    if not isinstance(strategy, tf.compat.v1.distribute.Strategy):
        return strategy
    converted = getattr(strategy, _V2_ATTR, None)
    if converted is not None:
        return converted
    devices = list(strategy.extended.worker_devices)
    if isinstance(strategy, tf.compat.v1.distribute.MirroredStrategy):
        converted = tf.distribute.MirroredStrategy(devices)
    elif isinstance(strategy, tf.compat.v1.distribute.OneDeviceStrategy):
        converted = tf.distribute.OneDeviceStrategy(devices[0])
    else:
        return strategy  # the v1 ParameterServerStrategy is run as it is (parameter_servers)
    setattr(strategy, _V2_ATTR, converted)
    return converted


def _named_strategies(config: Any) -> tuple[Any, Any]:
    """RunConfig's (train_distribute, eval_distribute), DistributeConfig's filling gaps."""
    train, evaluate = config.train_distribute, config.eval_distribute
    distribute = config.experimental_distribute
    if distribute is not None:
        train = train or getattr(distribute, "train_distribute", None)
        evaluate = evaluate or getattr(distribute, "eval_distribute", None)
    train, evaluate = _as_v2(train), _as_v2(evaluate)
    for name, strategy in (("train_distribute", train), ("eval_distribute", evaluate)):
        if strategy is not None and not isinstance(strategy, tf.distribute.Strategy):
            raise ValueError(
                f"RunConfig {name} must be a tf.distribute.Strategy, given: {strategy!r}. "
                "Fix: pass e.g. tf.distribute.MirroredStrategy(). "
                f"Received: type({name})={type(strategy).__name__}"
            )
    return train, evaluate


def _evaluates_per_replica(strategy: tf.distribute.Strategy) -> bool:
    """A strategy over this machine's devices: evaluation runs per replica under it. A
    MultiWorkerMirroredStrategy without a cluster (no TF_CONFIG), or on an `evaluator` task
    (where tf.estimator 2.15 ran its evaluations, "single-machine"), is one of them."""
    if isinstance(strategy, _EVAL_DISTRIBUTED):
        return True
    return isinstance(
        strategy, tf.distribute.MultiWorkerMirroredStrategy
    ) and not internals.in_multi_worker_mode(strategy)


def _log_undistributed_evaluation(strategy: tf.distribute.Strategy) -> None:
    logger.info(
        "Evaluation runs on the task that calls it, without distributing its batches over "
        "the %s (eval_distribute; tf.estimator 2.15 ran it only on an `evaluator` task, "
        "on that task's own devices): the metrics are the same.",
        type(strategy).__name__,
    )


def strategy_of(config: Any) -> tuple[tf.distribute.Strategy | None, frozenset[str]]:
    """The one strategy the Estimator's variables live under, and the modes it runs.

    Training runs distributed. Evaluation too when eval_distribute is the same one-machine
    strategy (each replica evaluates its own batches, the metrics summed across replicas).
    An eval_distribute of its own (without train_distribute, or another object) is
    `eval_strategy_of`'s. predict() never used a strategy.
    """
    train, evaluate = _named_strategies(config)
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
    strategy = train
    modes = {"train"} if strategy is not None else set()
    if evaluate is not None and evaluate is strategy:
        if _evaluates_per_replica(evaluate):
            modes.add("eval")  # each replica evaluates its batches, as tf.estimator did
        elif not parameter_servers.is_parameter_server_strategy(evaluate):
            # (a ParameterServerStrategy's evaluation runs on the coordinator: tf.estimator
            # had no parameter-server evaluation)
            _log_undistributed_evaluation(evaluate)
    if strategy is not None:
        logger.info("Initializing RunConfig with distribution strategies.")
        logger.info("Using %s with %d replicas.", type(strategy).__name__,
                    strategy.num_replicas_in_sync)  # fmt: skip
    return strategy, frozenset(modes)


def eval_strategy_of(
    config: Any, strategy: tf.distribute.Strategy | None
) -> tf.distribute.Strategy | None:
    """The strategy evaluation runs under with variables of its own, or None.

    When RunConfig's eval_distribute is not `strategy` (the one the Estimator's variables
    live under: train_distribute or none), tf.estimator 2.15 evaluated in a graph of its
    own under eval_distribute: every replica ran the EVAL model_fn on whole input_fn
    batches, the metrics summed over replicas. So does keras_estimator, with evaluation
    variables made under eval_distribute, for a MirroredStrategy, a OneDeviceStrategy and a
    MultiWorkerMirroredStrategy without a cluster, whatever train_distribute is. A
    multi-worker eval_distribute evaluates undistributed on the task that calls it.

    Example:
        >>> config = RunConfig(eval_distribute=tf.distribute.MirroredStrategy())
        >>> eval_strategy_of(config, None)  # the MirroredStrategy
    """
    _, evaluate = _named_strategies(config)
    if evaluate is None or evaluate is strategy:
        return None
    if not _evaluates_per_replica(evaluate):
        _log_undistributed_evaluation(evaluate)
        return None
    logger.info("Evaluation runs under eval_distribute, a %s with %d replicas.",
                type(evaluate).__name__, evaluate.num_replicas_in_sync)  # fmt: skip
    return evaluate


def iterator_spec(dataset: Any) -> tf.TypeSpec:
    """The type spec of an iterator over `dataset` (a tf.data or distributed dataset)."""
    if isinstance(dataset, tf.data.Dataset):
        return tf.data.IteratorSpec(dataset.element_spec)
    # A per-worker iterator (ParameterServerStrategy): a scheduled step gets one worker's.
    return iterator_type_spec(iter(dataset))


def first_replica(value: Any, strategy: tf.distribute.Strategy) -> Any:
    """Replica 0's part of a per-replica structure (what tf.estimator showed hooks)."""
    return tf.nest.map_structure(lambda v: strategy.experimental_local_results(v)[0], value)
