"""TPUEstimator's TPU-embedding bookkeeping that works without the TPU embedding engine.

2.15 translated TPU embedding feature columns (`tf.compat.v1.tpu.experimental
.embedding_column`, which TF 2.21 still has) into table and feature configs for the TF1
`TPUEmbedding` engine, which TF 2.21 no longer has. What is kept here is that translation
and its naming rules (tables are `tbl_<embedding var name>`; slot variables are named as
a CPU run names them), the feature-splitting helpers, and `EmbeddingConfig`, which raises
when made: it built the removed engine.
"""

from __future__ import annotations

import logging
from typing import Any, NamedTuple

import tensorflow as tf

logger = logging.getLogger("keras_estimator")

TABLE_NAME_PREFIX = "tbl_"
# The graph collection where TPU embedding columns record their variable scope.
TPU_FC_TO_SCOPE = "_tpu_feature_column_scope"


class TableConfig(NamedTuple):
    """One embedding table, as the TF1 `tpu_embedding.TableConfig` described it."""

    vocabulary_size: int
    dimension: int
    initializer: Any = None
    combiner: str | None = "mean"
    hot_id_replication: bool = False
    learning_rate: float | None = None
    learning_rate_fn: Any = None
    optimization_parameters: Any = None


class FeatureConfig(NamedTuple):
    """One feature looked up in a table, as the TF1 `tpu_embedding.FeatureConfig`."""

    table_id: str
    max_sequence_length: int = 0
    weight_key: str | None = None


# Slot variable names per embedding optimizer, as a CPU run of the same model names them.
class AdagradSlotVariableNames(NamedTuple):
    accumulator: str


class AdamSlotVariableNames(NamedTuple):
    m: str
    v: str


class FtrlSlotVariableNames(NamedTuple):
    accumulator: str
    linear: str


class MomentumSlotVariableNames(NamedTuple):
    momenta: str


class RMSPropSlotVariableNames(NamedTuple):
    ms: str
    mom: str


class ProximalAdagradSlotVariableNames(NamedTuple):
    accumulator: str


def is_tpu_embedding_column(column: Any) -> bool:
    """Whether `column` is a TPU embedding column (`tf.compat.v1.tpu.experimental
    .embedding_column` / `shared_embedding_columns`, v1 or v2)."""
    return all(
        hasattr(column, method)
        for method in (
            "get_embedding_table_size",
            "get_feature_key_name",
            "get_embedding_var_name",
            "get_combiner",
        )  # fmt: skip
    )


def table_name_from_embedding_var_name(embedding_var_name: str) -> str:
    return f"{TABLE_NAME_PREFIX}{embedding_var_name}"


def embedding_var_name_from_table_name(table_name: str) -> str:
    return table_name[len(TABLE_NAME_PREFIX) :]


def embedding_variable_name(scope_name: str, var_name: str) -> str:
    return f"{scope_name}/{var_name}" if scope_name else var_name


def slot_variable_names(scope_name: str, var_name: str, optimization_parameters: Any) -> Any:
    """The slot variable names a CPU run gives the table `var_name` under `scope_name`, for
    TPU embedding optimization parameters (TF1 `*Parameters` or TF2
    `tf.tpu.experimental.embedding` optimizers, by class name); None for SGD.

    Raises:
        ValueError: For an optimizer without known slot names.
    """
    base = embedding_variable_name(scope_name, var_name)
    kind = type(optimization_parameters).__name__.replace("Parameters", "")
    if kind == "Adagrad":
        return AdagradSlotVariableNames(f"{base}/Adagrad")
    if kind == "Adam":
        return AdamSlotVariableNames(f"{base}/Adam/m", f"{base}/Adam/v")
    if kind in ("Ftrl", "FTRL"):
        return FtrlSlotVariableNames(f"{base}/Ftrl", f"{base}/Ftrl_1")
    if kind == "Momentum":
        return MomentumSlotVariableNames(f"{base}/Momentum")
    if kind == "RMSProp":
        return RMSPropSlotVariableNames(ms=f"{base}/RMSProp/ms", mom=f"{base}/RMSProp/mom")
    if kind == "ProximalAdagrad":
        return ProximalAdagradSlotVariableNames(f"{base}/ProximalAdagrad")
    if kind in ("StochasticGradientDescent", "SGD"):
        return None
    raise ValueError(
        "Support to infer full variable name for optimization_parameter "
        f"{optimization_parameters} has not been added. Expected Adagrad, Adam, Ftrl, "
        "Momentum, RMSProp, ProximalAdagrad or StochasticGradientDescent parameters."
    )


def get_full_variable_names(graph: tf.Graph, table_to_config_dict: dict,
                            optimization_parameters: Any = None) -> tuple[dict, dict]:  # fmt: skip
    """(embedding variable name by table, slot variable names by table), from the scopes
    the TPU embedding columns recorded in `graph` (the record is cleared).

    Raises:
        RuntimeError: If no TPU embedding column was used in the graph.
    """
    collection = graph.get_collection_ref(TPU_FC_TO_SCOPE)
    if not collection:
        raise RuntimeError(
            "Embedding feature column did not capture any thing. Make sure the feature "
            "columns passed to TPUEstimator constructor is properly used in model_fn."
        )
    variables, slots = {}, {}
    for table_name in table_to_config_dict:
        scope_name, var_name = collection[0][embedding_var_name_from_table_name(table_name)]
        variables[table_name] = embedding_variable_name(scope_name, var_name)
        if optimization_parameters:
            slots[table_name] = slot_variable_names(scope_name, var_name, optimization_parameters)
    graph.clear_collection(TPU_FC_TO_SCOPE)
    return variables, slots


def get_configs_from_feature_columns(feature_columns: list) -> tuple[dict, dict]:
    """(TableConfig by table name, FeatureConfig by feature name) of TPU embedding columns.

    Raises:
        TypeError: For a column that is not a TPU embedding column.
        ValueError: If one feature is embedded twice.
    """
    table_to_config, feature_to_config = {}, {}
    for column in feature_columns:
        if not is_tpu_embedding_column(column):
            raise TypeError(
                f"Unsupported feature column {type(column)}. Supported are TPU embedding "
                "columns (tf.compat.v1.tpu.experimental.embedding_column / "
                "shared_embedding_columns)."
            )
        feature_name = column.get_feature_key_name()
        if feature_name in feature_to_config:
            raise ValueError(
                f"Feature column {feature_name} is used with multiple embeddings and this is "
                "not supported."
            )
        table_name = table_name_from_embedding_var_name(column.get_embedding_var_name())
        feature_to_config[feature_name] = FeatureConfig(
            table_id=table_name,
            max_sequence_length=column.get_max_sequence_length(),
            weight_key=column.get_weight_key_name(),
        )
        vocabulary_size, dimension = column.get_embedding_table_size()
        table_to_config[table_name] = TableConfig(
            vocabulary_size=vocabulary_size,
            dimension=dimension,
            initializer=column.get_initializer(),
            combiner=column.get_combiner(),
            learning_rate_fn=column.get_learning_rate_fn(),
        )
    return table_to_config, feature_to_config


def get_tpu_embedding_columns(feature_columns: list) -> list:
    """The TPU embedding columns among `feature_columns`."""
    return [column for column in feature_columns if is_tpu_embedding_column(column)]


def maybe_dense_to_sparse(tensor: Any) -> tf.SparseTensor:
    """A SparseTensor of the nonzero entries of a dense tensor (a SparseTensor as is)."""
    if isinstance(tensor, tf.SparseTensor):
        return tensor
    indices = tf.where(tf.not_equal(tensor, tf.zeros_like(tensor)))
    return tf.SparseTensor(indices, tf.gather_nd(tensor, indices), tf.shape(tensor, tf.int64))


def split_tensor(tensor: Any, num_splits: int) -> list:
    """`tensor` (dense or sparse) split along its batch into `num_splits` pieces."""
    if tensor is None:
        return [None] * num_splits
    if num_splits <= 0:
        raise ValueError(f"Tensors cannot be split into {num_splits} pieces.")
    if num_splits == 1:
        return [tensor]
    if isinstance(tensor, tf.SparseTensor):
        return tf.sparse.split(tensor, num_splits, axis=0)
    return tf.split(tensor, num_splits)


def sparse_feature_from_features(feature_key: str, features: dict) -> Any:
    """Pops an integer feature out of `features` (strings must be looked up first).

    Raises:
        ValueError: If the feature holds strings.
    """
    feature = features.pop(feature_key)
    if not feature.dtype.is_integer:
        raise ValueError(
            "SparseTensor with string as values are not supported. If you are using "
            "categorical_column_with_vocabulary_file or categorical_column_with_vocabulary_"
            "list, convert the strings to ids in your input_fn. "
            f"feature_key = {feature_key}."
        )
    return feature


def weights_from_features(weight_key_name: str | None, features: dict) -> Any:
    """Pops the (sparse, float32) weights feature `weight_key_name`, or None.

    Raises:
        ValueError: If the weights are missing or dense.
    """
    if weight_key_name is None:
        return None
    if weight_key_name not in features:
        raise ValueError(
            f"Cannot find weights {weight_key_name} for weighted_categorical_column. Please "
            "check if the weights are present in feature dict."
        )
    weights = features.pop(weight_key_name)
    if not isinstance(weights, tf.SparseTensor):
        raise ValueError(
            f"weighted_categorical_column with weight key name {weight_key_name} has dense "
            "weights. Dense weights are not supported on TPU. Please use sparse weights."
        )
    return weights if weights.dtype == tf.float32 else tf.cast(weights, tf.float32)


class EmbeddingConfig:
    """Not provided: 2.15's translation of an EmbeddingConfigSpec into the TF1 TPU
    embedding engine (`tpu_embedding.TPUEmbedding`), which TensorFlow 2.21 removed.

    Making one raises NotImplementedError; `get_configs_from_feature_columns` still gives
    the table and feature configs of TPU embedding columns.
    """

    def __init__(
        self,
        embedding_config_spec: Any,
        train_batch_size: int | None,
        eval_batch_size: int | None,
        num_hosts: int | None,
        num_cores: int | None,
        run_config: Any,
    ) -> None:
        raise NotImplementedError(
            "_tpu_estimator_embedding.EmbeddingConfig builds TPUEstimator's TF1 TPU "
            "embedding engine (tpu_embedding.TPUEmbedding), which runs only inside a TF1 "
            "session on a TPU and is gone from TensorFlow 2.21. keras_estimator runs "
            "TPUEstimator through tf.distribute and keeps embeddings as ordinary variables "
            "(TPUEstimator(embedding_config_spec=...) raises too). Expected: embeddings the "
            "model_fn creates. Fix: use tf.feature_column.embedding_column or "
            "keras.layers.Embedding in the model_fn, or move the model to Keras with "
            "tf.tpu.experimental.embedding.TPUEmbedding."
        )
