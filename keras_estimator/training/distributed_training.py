"""train_and_evaluate's task types under TF_CONFIG: chief/worker train, the evaluator
evaluates new checkpoints as they appear (sidecar evaluation), as in tf.estimator 2.15.

Training across workers synchronises through the RunConfig's `train_distribute`
strategy (MultiWorkerMirroredStrategy). With `ps` tasks, the chief coordinates a
ParameterServerStrategy and the worker / ps tasks serve it (see parameter_servers.py).
"""

from __future__ import annotations

import logging
import time
from typing import Any

import tensorflow as tf

from keras_estimator.checkpoint import checkpoint_files as ckpt_lib
from keras_estimator.distribute import parameter_servers
from keras_estimator.spec.run_config import TaskType
from keras_estimator.training.eval_and_export import evaluate_and_export

logger = logging.getLogger("keras_estimator")
_TRAINING_TASKS = (TaskType.CHIEF, TaskType.WORKER, TaskType.MASTER)


def run_task(estimator: Any, train_spec: Any, eval_spec: Any) -> tuple[Any, Any]:
    """Runs this process's part of a TF_CONFIG cluster job."""
    config = estimator.config
    task_type = config.task_type
    if task_type == TaskType.EVALUATOR:
        if config.task_id > 0:
            raise ValueError(
                "For distributed training, there can only be one `evaluator` task (with task "
                f"id 0).  Given task id {config.task_id}. Fix: run a single evaluator with "
                '"task": {"type": "evaluator", "index": 0} in TF_CONFIG. '
                f"Received: task_id={config.task_id}"
            )
        return run_evaluator(estimator, train_spec, eval_spec)
    if parameter_servers.has_parameter_servers(config) and task_type in (
        TaskType.WORKER,
        TaskType.PS,
    ):
        parameter_servers.serve(config, estimator.model_dir, train_spec.max_steps)
        return None, None
    if task_type not in _TRAINING_TASKS:
        raise ValueError(
            f"Task type {task_type} is not supported. Supported task types are "
            f"{sorted(_TRAINING_TASKS + (TaskType.EVALUATOR,))}. Fix: set TF_CONFIG's "
            '"task": {"type": ...} to one of those. '
            f"Received: task_type={task_type!r}"
        )
    if config.train_distribute is None and config.num_worker_replicas > 1:
        logger.warning(
            "TF_CONFIG names %d training tasks but RunConfig has no train_distribute: each "
            "task trains on its own. Use tf.distribute.MultiWorkerMirroredStrategy() to "
            "train them as one.",
            config.num_worker_replicas,
        )
    logger.info("Start training in task %s:%d.", task_type, config.task_id)
    estimator.train(
        input_fn=train_spec.input_fn,
        max_steps=train_spec.max_steps,
        hooks=list(train_spec.hooks),
        saving_listeners=list(train_spec.saving_listeners) if config.is_chief else None,
    )
    if task_type == TaskType.MASTER:
        checkpoint = estimator.latest_checkpoint()
        return evaluate_and_export(estimator, eval_spec, train_spec.max_steps, checkpoint)
    return None, None


def run_evaluator(estimator: Any, train_spec: Any, eval_spec: Any) -> tuple[Any, Any]:
    """Evaluates (and exports) each new checkpoint in model_dir until max_steps is reached.

    Waits `start_delay_secs` first and at least `throttle_secs` between evaluations.
    """
    time.sleep(eval_spec.start_delay_secs)
    previous, result, exports = None, None, None
    while True:
        started = time.time()
        checkpoint = ckpt_lib.latest_checkpoint(estimator.model_dir)
        if checkpoint is not None and checkpoint != previous:
            previous = checkpoint
            try:
                result, exports = evaluate_and_export(
                    estimator, eval_spec, train_spec.max_steps, checkpoint
                )
            except (ValueError, tf.errors.NotFoundError):
                if tf.io.gfile.exists(checkpoint + ".index"):
                    raise
                # The trainer's keep_checkpoint_max removed it meanwhile: take the newest.
                logger.warning(
                    "Checkpoint %s was deleted before it could be evaluated; evaluating the "
                    "newest one instead.",
                    checkpoint,
                )
                continue
            if train_spec.max_steps and result["global_step"] >= train_spec.max_steps:
                logger.info("Exiting evaluation, global_step=%d >= train max_steps=%d",
                            result["global_step"], train_spec.max_steps)  # fmt: skip
                return result, exports
        else:
            logger.info("No new checkpoint ready for evaluation.")
        time.sleep(max(eval_spec.throttle_secs - (time.time() - started), 0.5))
