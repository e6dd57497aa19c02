"""tf.estimator 2.15 names that keras_estimator does not provide, each with what to use instead.

They resolve (so `tf.estimator.experimental.LinearSDCA` in an import or a default argument does
not fail), take tf.estimator 2.15's constructor arguments, and raise NotImplementedError on
construction, naming the replacement. `keras-estimator check` reports them as unsupported.
"""

from __future__ import annotations

from typing import Any, NoReturn


def not_provided(api: str, why: str, fix: str) -> NoReturn:
    """Raises the NotImplementedError of an unprovided tf.estimator 2.15 API."""
    raise NotImplementedError(
        f"{api} is not provided by keras_estimator: {why}. Expected: code built on the "
        f"tf.estimator APIs keras_estimator runs (`keras-estimator check` lists them). Fix: {fix}."
    )


class LinearSDCA:
    """Not provided: `tf.estimator.experimental.LinearSDCA`, the SDCA optimizer of linear
    estimators. Constructing it raises NotImplementedError; use LinearClassifier /
    LinearRegressor with their default Ftrl optimizer (with l1/l2 regularization)."""

    def __init__(
        self,
        example_id_column: Any,
        num_loss_partitions: int = 1,
        num_table_shards: Any = None,
        symmetric_l1_regularization: float = 0.0,
        symmetric_l2_regularization: float = 1.0,
        adaptive: bool = False,
    ) -> None:
        not_provided(
            "tf.estimator.experimental.LinearSDCA",
            "the SDCA optimizer needs TensorFlow's removed sdca_optimizer ops",
            "use tf.estimator.LinearClassifier / LinearRegressor with optimizer='Ftrl' (their "
            "default), e.g. optimizer=tf.keras.optimizers.Ftrl(learning_rate, "
            "l1_regularization_strength=..., l2_regularization_strength=...) for the "
            "symmetric_l1/l2_regularization",
        )
