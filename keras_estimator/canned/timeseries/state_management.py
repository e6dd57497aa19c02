"""State managers: how a time-series head hands state to its model (tf.estimator 2.15's)."""

from __future__ import annotations

import abc
from typing import Any

from keras_estimator.canned.timeseries import feature_keys
from keras_estimator.spec.mode_keys import ModeKeys


class PassthroughStateManager:
    """For models that need no state management: every batch starts from the model's start
    state; a `start_tuple` feature is refused."""

    def __init__(self) -> None:
        self._input_statistics = None
        self._graph_initialized = False

    def initialize_graph(self, model: Any, input_statistics: Any = None) -> None:
        """Takes the input statistics for this model_fn call."""
        del model
        self._graph_initialized = True
        self._input_statistics = input_statistics

    def define_loss(self, model: Any, features: dict, mode: str) -> Any:
        """The model's `ModelOutputs` on `features` from its start state.

        Raises:
            ValueError: if `features` holds a start state.
        """
        if feature_keys.State.STATE_TUPLE in features:
            raise ValueError(
                f"Overriding start state is not supported for this model (the features hold "
                f"'{feature_keys.State.STATE_TUPLE}'). Remove that feature, or use a state "
                "manager that accepts state (FilteringOnlyStateManager)."
            )
        return model.define_loss(features, mode)


class _OverridableStateManager(PassthroughStateManager):
    """Uses the state given in the features (`start_tuple`, not in TRAIN) when there is
    one, else the state the subclass manages."""

    @abc.abstractmethod
    def _define_loss_with_saved_state(self, model: Any, features: dict, mode: str) -> Any:
        """The outputs from the managed state."""

    def define_loss(self, model: Any, features: dict, mode: str) -> Any:
        """The model's `ModelOutputs`, from the given state or the managed one.

        Raises:
            ValueError: if a state is given in TRAIN.
        """
        key = feature_keys.FilteringFeatures.STATE_TUPLE
        if key not in features:
            return self._define_loss_with_saved_state(model=model, features=features, mode=mode)
        if mode == ModeKeys.TRAIN:
            raise ValueError(
                f"Overriding saved state for training is not supported (but a value for "
                f"feature {key} was specified). Give '{key}' only to evaluate or predict."
            )
        features = dict(features)
        start_state = features.pop(key)
        return model.get_batch_loss(features=features, mode=mode, state=start_state)


class FilteringOnlyStateManager(_OverridableStateManager):
    """For window-based models (ARModel): training needs no state, filtering continues from
    the state given (or the start state)."""

    def _define_loss_with_saved_state(self, model: Any, features: dict, mode: str) -> Any:
        return model.define_loss(features, mode)
