"""`tf.compat.v1.estimator.tpu.experimental`: EmbeddingConfigSpec, which keras_estimator does
not provide (TPU embeddings); constructing it raises NotImplementedError."""

from __future__ import annotations

from typing import Any


class EmbeddingConfigSpec:
    """Not provided: TPUEstimator's TPU embedding configuration. Constructing it raises
    NotImplementedError; use `tf.tpu.experimental.embedding` or Keras embedding layers."""

    def __new__(
        cls,
        feature_columns: Any = None,
        optimization_parameters: Any = None,
        clipping_limit: Any = None,
        pipeline_execution_with_tensor_core: bool = False,
        experimental_gradient_multiplier_fn: Any = None,
        feature_to_config_dict: Any = None,
        table_to_config_dict: Any = None,
        partition_strategy: str = "div",
        profile_data_directory: Any = None,
    ) -> EmbeddingConfigSpec:
        raise NotImplementedError(
            "tf.compat.v1.estimator.tpu.experimental.EmbeddingConfigSpec is not provided by "
            "keras_estimator: TPUEstimator's TPU embeddings (the TPU embedding engine and "
            "tf.tpu.experimental.embedding_column feature columns) are not supported, and "
            "TPUEstimator(embedding_config_spec=...) raises too. Expected: embeddings that the "
            "model_fn creates as ordinary variables. Fix: drop embedding_config_spec and use "
            "keras.layers.Embedding or tf.feature_column.embedding_column in the model_fn, or "
            "move the model to Keras with tf.tpu.experimental.embedding.TPUEmbedding (keras_rs "
            "on Keras 3)."
        )


__all__ = ["EmbeddingConfigSpec"]
