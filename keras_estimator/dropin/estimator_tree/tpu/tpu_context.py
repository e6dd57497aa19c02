"""2.15's `tpu.tpu_context`: TPUContext (`params["context"]`) and the TPU context behind it.

Every name works (keras_estimator's `tpu.tpu_context`): `_InternalTPUContext` answers the
replica, host, batch-size and placement questions of a `tpu.RunConfig`. With
`use_tpu=False` it describes this host with `TPUConfig.num_shards` cores (1 when unset) and
queries nothing; with `use_tpu=True` it asks the TPU of the RunConfig's cluster resolver.
`_TPUEstimatorReplicaContext` records summaries on replica 0 only (`tf.summary.record_if`).
"""

from keras_estimator.tpu.tpu_context import (
    DEFAULT_COORDINATOR_JOB_NAME as _DEFAULT_COORDINATOR_JOB_NAME,
)
from keras_estimator.tpu.tpu_context import DEFAULT_JOB_NAME as _DEFAULT_JOB_NAME
from keras_estimator.tpu.tpu_context import LOCAL_MASTERS as _LOCAL_MASTERS
from keras_estimator.tpu.tpu_context import (
    NUM_CORES_TO_COMPUTATION_SHAPE as _NUM_CORES_TO_COMPUTATION_SHAPE,
)
from keras_estimator.tpu.tpu_context import InternalTPUContext as _InternalTPUContext
from keras_estimator.tpu.tpu_context import OneCoreTPUContext as _OneCoreTPUContext
from keras_estimator.tpu.tpu_context import TPUContext
from keras_estimator.tpu.tpu_context import (
    TPUEstimatorReplicaContext as _TPUEstimatorReplicaContext,
)
from keras_estimator.tpu.tpu_context import get_tpu_context as _get_tpu_context

__all__ = [
    "TPUContext",
    "_DEFAULT_COORDINATOR_JOB_NAME",
    "_DEFAULT_JOB_NAME",
    "_InternalTPUContext",
    "_LOCAL_MASTERS",
    "_NUM_CORES_TO_COMPUTATION_SHAPE",
    "_OneCoreTPUContext",
    "_TPUEstimatorReplicaContext",
    "_get_tpu_context",
]
