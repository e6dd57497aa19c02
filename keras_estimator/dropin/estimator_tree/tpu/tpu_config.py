"""2.15's `tpu.tpu_config`: TPUConfig, InputPipelineConfig and the TPU RunConfig
(keras_estimator's own, the classes of `tf.compat.v1.estimator.tpu`)."""

from keras_estimator.tpu.tpu_config import InputPipelineConfig, RunConfig, TPUConfig
from keras_estimator.tpu.tpu_config import (
    _tpu_job_name_from_tf_config as _get_tpu_job_name_from_tf_config,
)

_TPU_WORKER_JOB_NAME = "tpu_worker_job_name"  # TF_CONFIG["service"] key of the TPU job

__all__ = [
    "InputPipelineConfig",
    "RunConfig",
    "TPUConfig",
    "_TPU_WORKER_JOB_NAME",
    "_get_tpu_job_name_from_tf_config",
]
