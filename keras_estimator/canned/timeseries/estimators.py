"""`TimeSeriesRegressor` and `LSTMAutoRegressor`: tf.estimator 2.15's time-series
Estimators, on keras_estimator's Estimator.

The input_fn returns features only: `times` ([batch, window] integers) and `values`
([batch, window, num_features]), plus any exogenous features shaped [batch, window, ...].
`evaluate()` returns the loss, the in-sample `mean` / `covariance` / `observed` values,
their `times` and (but for `LSTMAutoRegressor`) the end state `start_tuple`; `predict()`
takes `times` after that state and the `start_tuple` itself.
"""

from __future__ import annotations

import functools
from typing import Any

import tensorflow as tf

from keras_estimator.canned.timeseries import ar_model, feature_keys, math_utils, state_management
from keras_estimator.canned.timeseries import head as ts_head_lib
from keras_estimator.canned.v1.optimizers import get_optimizer_instance
from keras_estimator.estimator.estimator import Estimator
from keras_estimator.export.receivers import ServingInputReceiver
from keras_estimator.utils.log import quiet_tf_deprecations

_V1 = tf.compat.v1
_TIMES = feature_keys.TrainEvalFeatures.TIMES


class TimeSeriesRegressor(Estimator):
    """An Estimator that fits and evaluates a time-series model.

    Args:
        model: the `TimeSeriesModel` (such as `ar_model.ARModel`).
        state_manager: the state manager; by default `FilteringOnlyStateManager` for an
            `ARModel`, else `PassthroughStateManager`.
        optimizer: a `tf.compat.v1.train.Optimizer`; by default Adam with step size 0.02.
        model_dir: see `Estimator`.
        config: see `Estimator`.
        head_type: the head class (`TimeSeriesRegressionHead` or a subclass).

    Example:
        >>> model = ar_model.ARModel(periodicities=20, input_window_size=10,
        ...                          output_window_size=5, num_features=1)
        >>> estimator = TimeSeriesRegressor(model, model_dir="runs/ar")
        >>> estimator.train(lambda: windows_dataset, steps=300)
    """

    def __init__(
        self, model: Any, state_manager: Any = None, optimizer: Any = None,
        model_dir: Any = None, config: Any = None,
        head_type: Any = ts_head_lib.TimeSeriesRegressionHead,
    ) -> None:  # fmt: skip
        statistics = math_utils.InputStatisticsFromMiniBatch(
            dtype=model.dtype, num_features=model.num_features
        )
        if state_manager is None:
            if isinstance(model, ar_model.ARModel):
                state_manager = state_management.FilteringOnlyStateManager()
            else:
                state_manager = state_management.PassthroughStateManager()
        if optimizer is None:
            optimizer = _V1.train.AdamOptimizer(0.02)
        self._model = model
        head = head_type(
            model=model, state_manager=state_manager, optimizer=optimizer,
            input_statistics_generator=statistics,
        )  # fmt: skip
        super().__init__(model_fn=head.create_estimator_spec, model_dir=model_dir, config=config)

    def _model_start_state_placeholders(
        self, batch_size_tensor: Any, static_batch_size: Any = None
    ) -> dict:
        """`model_state_NN` placeholders defaulting to the model's start state, repeated
        across the batch (the cold start of a serving signature)."""
        with tf.Graph().as_default():  # the model's state needs its graph; only shapes leave it
            self._model.initialize_graph()
            start_state = tf.nest.map_structure(
                lambda t: tf.get_static_value(tf.zeros_like(t)), self._model.get_start_state()
            )
        placeholders = {}
        for name, state in ts_head_lib.state_to_dictionary(start_state).items():
            shape = tf.TensorShape([static_batch_size]).concatenate(state.shape)
            multiples = tf.concat([batch_size_tensor[None], tf.ones([state.ndim], tf.int32)], 0)
            default = tf.tile(tf.constant(state)[None, ...], multiples)
            placeholders[name] = _V1.placeholder_with_default(default, shape=shape, name=name)
        return placeholders

    def build_one_shot_parsing_serving_input_receiver_fn(
        self, filtering_length: int, prediction_length: int, default_batch_size: Any = None,
        values_input_dtype: Any = None, truncate_values: bool = False,
    ) -> Any:  # fmt: skip
        """A serving_input_receiver_fn taking serialized tf.Examples (for
        `OneShotPredictionHead`): each has `times` [filtering_length + prediction_length],
        `values` [filtering_length (+ prediction_length if truncate_values), num_features]
        and the exogenous features [filtering_length + prediction_length, ...].

        Args:
            filtering_length: the number of times with values to filter.
            prediction_length: the number of times to predict.
            default_batch_size: a fixed batch size for the signature, or None.
            values_input_dtype: float32 (default) or int64, as the examples hold values.
            truncate_values: whether examples hold values for every time (the first
                `filtering_length` are used).

        Returns:
            A function for `export_saved_model`.
        """
        values_dtype = values_input_dtype or tf.float32
        values_length = (
            filtering_length + prediction_length if truncate_values else filtering_length
        )
        total = filtering_length + prediction_length
        model = self._model

        def serving_input_receiver_fn() -> ServingInputReceiver:
            columns = list(model.exogenous_feature_columns) + [
                tf.feature_column.numeric_column(_TIMES, dtype=tf.int64),
                tf.feature_column.numeric_column(
                    feature_keys.TrainEvalFeatures.VALUES, dtype=values_dtype,
                    shape=(model.num_features,),
                ),
            ]  # fmt: skip
            with quiet_tf_deprecations():
                specs = _V1.feature_column.make_parse_example_spec(columns)
            parsing = {}
            for key, spec in specs.items():
                if isinstance(spec, tf.io.FixedLenFeature):
                    length = (
                        values_length if key == feature_keys.TrainEvalFeatures.VALUES else total
                    )
                    parsing[key] = spec._replace(shape=(length, *spec.shape))
                elif spec.dtype == tf.string:
                    parsing[key] = tf.io.FixedLenFeature(shape=(total,), dtype=tf.string)
                else:
                    raise ValueError(
                        f"VarLenFeatures not supported, got {spec} for key {key}: give the "
                        "exogenous feature a fixed shape (numeric_column, or an indicator / "
                        "embedding column over a string feature)."
                    )
            examples = _V1.placeholder(tf.string, shape=[default_batch_size], name="input")
            features = _V1.io.parse_example(examples, parsing)
            times_key, values_key = (
                feature_keys.TrainEvalFeatures.TIMES,
                feature_keys.TrainEvalFeatures.VALUES,
            )
            features[times_key] = tf.squeeze(features[times_key], axis=-1)
            features[values_key] = tf.cast(features[values_key], model.dtype)[:, :filtering_length]
            features.update(
                self._model_start_state_placeholders(
                    tf.shape(features[times_key])[0], static_batch_size=default_batch_size
                )
            )
            return ServingInputReceiver(features, {"examples": examples})

        return serving_input_receiver_fn

    def build_raw_serving_input_receiver_fn(
        self, default_batch_size: Any = None, default_series_length: Any = None
    ) -> Any:
        """A serving_input_receiver_fn taking arrays: `times`, `values` (defaulting to
        zeros: prediction needs none), the exogenous features and the flattened state
        (`model_state_NN`, defaulting to the start state). With it, `export_saved_model`
        writes the predict, filter and cold_start_filter signatures
        (`saved_model_utils` calls them).

        Args:
            default_batch_size: a fixed batch size for the signatures, or None.
            default_series_length: a fixed series length, or None.

        Returns:
            A function for `export_saved_model`.
        """
        model = self._model

        def serving_input_receiver_fn() -> ServingInputReceiver:
            times_key, values_key = (
                feature_keys.TrainEvalFeatures.TIMES,
                feature_keys.TrainEvalFeatures.VALUES,
            )
            placeholders = {
                times_key: _V1.placeholder(
                    tf.int64, shape=[default_batch_size, default_series_length], name=times_key
                )
            }
            zeros = tf.zeros(
                [default_batch_size or 0, default_series_length or 0, model.num_features],
                dtype=model.dtype,
            )
            placeholders[values_key] = _V1.placeholder_with_default(
                zeros, shape=(default_batch_size, default_series_length, model.num_features),
                name=values_key,
            )  # fmt: skip
            if model.exogenous_feature_columns:
                with tf.Graph().as_default(), quiet_tf_deprecations():
                    specs = _V1.feature_column.make_parse_example_spec(
                        model.exogenous_feature_columns
                    )
                    parsed = _V1.io.parse_example(_V1.placeholder(tf.string, [None]), specs)
                    shapes = {k: (v.shape, v.dtype) for k, v in parsed.items()}
                for key, (shape, dtype) in shapes.items():
                    rest = shape.with_rank_at_least(1).as_list()[1:]
                    placeholders[key] = _V1.placeholder(
                        dtype, shape=[default_batch_size, default_series_length, *rest], name=key
                    )
            placeholders.update(
                self._model_start_state_placeholders(
                    tf.shape(placeholders[times_key])[0], static_batch_size=default_batch_size
                )
            )
            return ServingInputReceiver(placeholders, placeholders)

        return serving_input_receiver_fn


class LSTMAutoRegressor(TimeSeriesRegressor):
    """An Estimator for an LSTM autoregressive model (tf.estimator 2.15's).

    A window-based `ARModel` with an `LSTMPredictionModel`: the input_fn's windows hold
    `input_window_size + output_window_size` times. Serving takes `times`, `values` and
    exogenous features but no state (`OneShotPredictionHead`).

    Args:
        periodicities: one periodicity or a list (in the units of `times`).
        input_window_size: the number of past times the model reads.
        output_window_size: the number of times predicted at once.
        model_dir: see `Estimator`.
        num_features: the number of values per time.
        extra_feature_columns: feature columns of exogenous features.
        num_timesteps: the buckets per periodicity (time features).
        loss: `ARModel.NORMAL_LIKELIHOOD_LOSS` or `ARModel.SQUARED_LOSS`.
        num_units: the units of the encoder and decoder LSTMs.
        optimizer: a name ("Adam", ...), a `tf.compat.v1.train.Optimizer` or a callable
            returning one; a name gets learning rate 0.01.
        config: see `Estimator`.
    """

    def __init__(
        self, periodicities: Any, input_window_size: int, output_window_size: int,
        model_dir: Any = None, num_features: int = 1, extra_feature_columns: Any = None,
        num_timesteps: int = 10, loss: str = ar_model.ARModel.NORMAL_LIKELIHOOD_LOSS,
        num_units: int = 128, optimizer: Any = "Adam", config: Any = None,
    ) -> None:  # fmt: skip
        optimizer = get_optimizer_instance(optimizer, learning_rate=0.01)
        model = ar_model.ARModel(
            periodicities=periodicities,
            input_window_size=input_window_size,
            output_window_size=output_window_size,
            num_features=num_features,
            exogenous_feature_columns=extra_feature_columns,
            num_time_buckets=num_timesteps,
            loss=loss,
            prediction_model_factory=functools.partial(
                ar_model.LSTMPredictionModel, num_units=num_units
            ),
        )
        super().__init__(
            model=model,
            state_manager=state_management.FilteringOnlyStateManager(),
            optimizer=optimizer,
            model_dir=model_dir,
            config=config,
            head_type=ts_head_lib.OneShotPredictionHead,
        )
