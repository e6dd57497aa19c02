"""TPUEstimator: BERT-era TPU code on keras_estimator (use_tpu=False runs on CPU/GPU).

What changes from Estimator is what TPUEstimator changed: `params["batch_size"]` for
input_fn and model_fn per mode, `params["use_tpu"]` for model_fn, model_fns returning a
`TPUEstimatorSpec` (eval_metrics, host_call, scaffold_fn), and a `tpu.RunConfig`.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import Any

import tensorflow as tf

from keras_estimator.estimator.estimator import Estimator
from keras_estimator.runtime.input_fn_calls import call_input_fn
from keras_estimator.spec.mode_keys import ModeKeys
from keras_estimator.tpu.tpu_config import RunConfig, parse_iterations_per_loop
from keras_estimator.tpu.tpu_estimator_spec import TPUEstimatorSpec
from keras_estimator.tpu.tpu_strategy import make_tpu_strategy
from keras_estimator.utils.fn_args import fn_args

logger = logging.getLogger("keras_estimator")
RESERVED_PARAMS_KEYS = ["batch_size", "context"]


def _check_batch_size(value: Any, name: str) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ValueError(f"{name} must be positive integer. Given: {value!r}")


class TPUEstimator(Estimator):
    """`tf.estimator.tpu.TPUEstimator`: an Estimator for TPU-style model_fns.

    With `use_tpu=False` (CPU/GPU) it runs like TPUEstimator did off TPU: input_fn and
    model_fn get the global batch size of the mode as `params["batch_size"]`, model_fn
    gets `params["use_tpu"] = False`, and a `TPUEstimatorSpec` becomes an EstimatorSpec
    (`eval_metrics` -> eval_metric_ops, `host_call` run every training step,
    `scaffold_fn` called). `use_tpu=True` trains under a `tf.distribute.TPUStrategy` built
    from `tpu.RunConfig(cluster=TPUClusterResolver(...))`: untested on TPU hardware.
    On TPU, `TPUConfig.iterations_per_loop` (a count) becomes `RunConfig.steps_per_execution`;
    off TPU it has no effect, as in TPUEstimator.

    Example:
        >>> est = TPUEstimator(model_fn, config=RunConfig(model_dir="m"), use_tpu=False,
        ...                    train_batch_size=32, eval_batch_size=8, predict_batch_size=8)
        >>> est.train(input_fn, max_steps=1000)
    """

    def __init__(
        self,
        model_fn: Callable | None = None,
        model_dir: str | os.PathLike | None = None,
        config: RunConfig | None = None,
        params: dict | None = None,
        use_tpu: bool = True,
        train_batch_size: int | None = None,
        eval_batch_size: int | None = None,
        predict_batch_size: int | None = None,
        batch_axis: Any = None,
        eval_on_tpu: bool = True,
        export_to_tpu: bool = True,
        export_to_cpu: bool = True,
        warm_start_from: Any = None,
        embedding_config_spec: Any = None,
        export_saved_model_api_version: Any = 1,
    ) -> None:
        if config is None or not isinstance(config, RunConfig):
            raise ValueError("`config` must be provided with type `tpu_config.RunConfig`")
        if params is not None and any(k in params for k in RESERVED_PARAMS_KEYS):
            raise ValueError(
                f"{RESERVED_PARAMS_KEYS} are reserved keys but existed in params {params}."
            )
        if use_tpu:
            if train_batch_size is None:
                raise ValueError("`train_batch_size` cannot be `None`")
            _check_batch_size(train_batch_size, "train_batch_size")
        for name, value in (
            ("eval_batch_size", eval_batch_size),
            ("predict_batch_size", predict_batch_size),
        ):
            if use_tpu and value is not None:
                _check_batch_size(value, name)
        if export_saved_model_api_version not in (1, 2) and not hasattr(
            export_saved_model_api_version, "value"
        ):
            raise ValueError(
                "export_saved_model_api_version should be 1 or 2; "
                f"got {export_saved_model_api_version}."
            )
        if embedding_config_spec is not None:
            raise NotImplementedError(
                "TPUEstimator(embedding_config_spec=...) (TPU embeddings) is not supported by "
                "keras_estimator. Expected embeddings as ordinary variables in the model_fn."
            )
        if model_fn is None:  # the default of tf.estimator's signature: Estimator's error
            raise ValueError("model_fn must be provided to Estimator.")
        if "params" not in fn_args(model_fn):
            raise ValueError(
                f"model_fn ({model_fn}) does not include params argument, required by "
                "TPUEstimator to pass batch size as params['batch_size']"
            )
        super().__init__(model_fn, model_dir, config, params or {}, warm_start_from)
        self._use_tpu = bool(use_tpu)
        self._batch_sizes = {
            ModeKeys.TRAIN: train_batch_size,
            ModeKeys.EVAL: eval_batch_size,
            ModeKeys.PREDICT: predict_batch_size,
        }
        if eval_on_tpu and not use_tpu:
            logger.warning("eval_on_tpu ignored because use_tpu is False.")
        self._export_to_cpu, self._export_to_tpu = export_to_cpu, export_to_tpu
        self._exporting = False
        if self._use_tpu:
            self._use_tpu_strategy(make_tpu_strategy(self._config))

    def _use_tpu_strategy(self, strategy: tf.distribute.Strategy) -> None:
        """Trains under `strategy`; batch sizes become per-replica (TPUEstimator's shards);
        `iterations_per_loop` (a count) caps the steps per compiled call."""
        loop = parse_iterations_per_loop(self._config.tpu_config.iterations_per_loop)
        if loop.unit == "count" and self._config.steps_per_execution is None:
            self._replace_config(self._config.replace(steps_per_execution=loop.value))
        replicas = strategy.num_replicas_in_sync
        for mode, size in self._batch_sizes.items():
            if size is not None and size % replicas:
                raise ValueError(
                    f"{mode} batch size {size} must be divisible by the number of replicas "
                    f"({replicas}): TPUEstimator splits the global batch across them."
                )
        # input_fn runs per host and its batches go to the replicas one each, so it (and
        # the model_fn) get the per-replica size, as TPUEstimator's per-shard batch size.
        self._batch_sizes[ModeKeys.TRAIN] //= replicas
        self._runtime.use_strategy(strategy, frozenset({ModeKeys.TRAIN}))
        logger.warning(
            "TPU execution in keras_estimator is untested on TPU hardware; evaluation and "
            "prediction run on the host."
        )

    # -- what TPUEstimator changed --------------------------------------------------------
    def _call_input_fn(
        self,
        input_fn: Callable,
        mode: str,
        input_context: Any = None,
        repeat_tensors: bool = False,
    ) -> tf.data.Dataset:
        if "params" not in fn_args(input_fn):
            raise ValueError(
                f"input_fn ({input_fn}) does not include params argument, required by "
                'TPUEstimator to pass batch size as params["batch_size"]'
            )
        params = self.params
        if self._batch_sizes[mode] is not None:
            params["batch_size"] = self._batch_sizes[mode]
        # Under a strategy an input_fn that names `input_context` gets it, as in Estimator.
        return call_input_fn(
            input_fn, mode, params, self.config, input_context, repeat_tensors=repeat_tensors
        )

    def _model_fn_params(self, mode: str) -> dict:
        on_tpu = self._use_tpu and mode in self._runtime.distributed_modes and not self._exporting
        logger.info("Running %s on %s", mode, "TPU" if on_tpu else "CPU/GPU")
        params = self.params
        if not self._exporting and self._batch_sizes[mode] is not None:
            params["batch_size"] = self._batch_sizes[mode]
        params["use_tpu"] = on_tpu
        return params

    def _as_estimator_spec(self, result: Any) -> Any:
        if isinstance(result, TPUEstimatorSpec):
            return result.as_estimator_spec()
        return result

    def export_saved_model(self, export_dir_base: Any, serving_input_receiver_fn: Callable,
                           *args: Any, **kwargs: Any) -> bytes:  # fmt: skip
        """Exports as `Estimator.export_saved_model` (the CPU graph; no TPU metagraph)."""
        if not self._export_to_cpu and not self._export_to_tpu:
            raise ValueError("One of export_to_cpu and export_to_tpu must be true.")
        if self._export_to_tpu:
            logger.info(
                "export_to_tpu: keras_estimator exports the CPU/GPU serving graph only; no "
                "TPU-rewritten metagraph is written."
            )
        self._exporting = True
        try:
            return super().export_saved_model(
                export_dir_base, serving_input_receiver_fn, *args, **kwargs
            )
        finally:
            self._exporting = False
