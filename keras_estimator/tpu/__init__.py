"""`tf.estimator.tpu` on keras_estimator: TPUEstimator, TPUEstimatorSpec and TPU configs."""

from keras_estimator.tpu import experimental
from keras_estimator.tpu.tpu_config import InputPipelineConfig, RunConfig, TPUConfig
from keras_estimator.tpu.tpu_estimator import TPUEstimator
from keras_estimator.tpu.tpu_estimator_spec import TPUEstimatorSpec

__all__ = [
    "experimental",
    "InputPipelineConfig",
    "RunConfig",
    "TPUConfig",
    "TPUEstimator",
    "TPUEstimatorSpec",
]
