"""2.15's `canned/timeseries/state_management.py`: how a time-series head hands state to
its model."""

from keras_estimator.canned.timeseries.state_management import (
    FilteringOnlyStateManager,
    PassthroughStateManager,
    _OverridableStateManager,
)

__all__ = ["FilteringOnlyStateManager", "PassthroughStateManager", "_OverridableStateManager"]
