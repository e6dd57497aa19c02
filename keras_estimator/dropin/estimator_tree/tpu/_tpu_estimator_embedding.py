"""2.15's `tpu._tpu_estimator_embedding`: TPUEstimator's TPU-embedding bookkeeping.

Working: the translation of TPU embedding columns (`tf.compat.v1.tpu.experimental
.embedding_column`, still in TF 2.21) into table and feature configs
(`get_configs_from_feature_columns`, as namedtuples with the TF1 configs' fields), the
variable naming rules, `get_full_variable_names`, `get_tpu_embedding_columns`, and the
feature helpers (`_maybe_dense_to_sparse`, `_split_tensor`, ...). `split_inputs` passes
features through (no TPU embedding is ever configured).

Raising a clear error when used (the TF1 TPU embedding engine is gone from TF 2.21, and
keras_estimator keeps embeddings as ordinary variables):

- `EmbeddingConfigSpec`: making one raises (the same class as
  `tf.compat.v1.estimator.tpu.experimental.EmbeddingConfigSpec`);
- `EmbeddingConfig`: making one raises (it built `tpu_embedding.TPUEmbedding`).
"""

from __future__ import annotations

import collections
from typing import Any

from keras_estimator.tpu.embedding_configs import (
    TABLE_NAME_PREFIX as _TABLE_NAME_PREFIX,
)
from keras_estimator.tpu.embedding_configs import (
    EmbeddingConfig,
    get_configs_from_feature_columns,
    get_full_variable_names,
    get_tpu_embedding_columns,
)
from keras_estimator.tpu.embedding_configs import (
    embedding_var_name_from_table_name as _get_embedding_var_name_from_table_name,
)
from keras_estimator.tpu.embedding_configs import (
    embedding_variable_name as _get_embedding_variable_name,
)
from keras_estimator.tpu.embedding_configs import maybe_dense_to_sparse as _maybe_dense_to_sparse
from keras_estimator.tpu.embedding_configs import (
    slot_variable_names as _get_slot_variable_names,
)
from keras_estimator.tpu.embedding_configs import (
    sparse_feature_from_features as _get_sparse_feature_from_feature,
)
from keras_estimator.tpu.embedding_configs import split_tensor as _split_tensor
from keras_estimator.tpu.embedding_configs import (
    table_name_from_embedding_var_name as _get_table_name_from_embedding_var_name,
)
from keras_estimator.tpu.embedding_configs import (
    weights_from_features as _get_weights_from_features,
)
from keras_estimator.tpu.experimental import EmbeddingConfigSpec
from keras_estimator.tpu.tpu_only import tpu_session_only

_LEN_TABLE_NAME_PREFIX = len(_TABLE_NAME_PREFIX)


def split_inputs(ctx: Any, features: Any, labels: Any, num_cores_per_batch: int = 1) -> tuple:
    """(features, labels, one enqueue-data dict per core) for TPU embedding lookups.

    No TPU embedding is ever configured in keras_estimator (`ctx.embedding_config` is None),
    so features and labels come back as they are, with empty enqueue data.

    Raises:
        NotImplementedError: If `ctx` names tensor-core embedding columns.
    """
    if getattr(ctx, "embedding_config", None) or getattr(
        ctx, "tensor_core_embedding_columns", None
    ):
        raise tpu_session_only(
            "_tpu_estimator_embedding.split_inputs",
            "TPUEstimator's splitting of features for the TPU embedding engine",
            "use embedding columns or keras.layers.Embedding in the model_fn (ordinary "
            "variables) instead of an EmbeddingConfigSpec.",
        )
    return features, labels, [collections.OrderedDict() for _ in range(num_cores_per_batch)]


__all__ = [
    "EmbeddingConfig",
    "EmbeddingConfigSpec",
    "get_configs_from_feature_columns",
    "get_full_variable_names",
    "get_tpu_embedding_columns",
    "split_inputs",
    "_LEN_TABLE_NAME_PREFIX",
    "_TABLE_NAME_PREFIX",
    "_get_embedding_var_name_from_table_name",
    "_get_embedding_variable_name",
    "_get_slot_variable_names",
    "_get_sparse_feature_from_feature",
    "_get_table_name_from_embedding_var_name",
    "_get_weights_from_features",
    "_maybe_dense_to_sparse",
    "_split_tensor",
]
