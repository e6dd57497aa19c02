"""2.15's `canned/optimizers.py`: resolving what a canned estimator was given to train with.

`get_optimizer_instance` is the v1 resolution (names to `tf.compat.v1.train` optimizers);
`get_optimizer_instance_v2` the v2 one (names to Keras optimizers).
"""

from __future__ import annotations

from typing import Any

import keras

from keras_estimator.canned.v1.optimizers import OPTIMIZER_NAMES
from keras_estimator.canned.v1.optimizers import get_optimizer_instance as _v1_instance

_V2_NAMES: dict[str, Any] = {
    "Adagrad": keras.optimizers.Adagrad,
    "Adam": keras.optimizers.Adam,
    "Ftrl": keras.optimizers.Ftrl,
    "RMSProp": keras.optimizers.RMSprop,
    "SGD": keras.optimizers.SGD,
}


def _string_needs_rate(opt: Any, learning_rate: float | None, names: dict) -> None:
    if isinstance(opt, str):
        if opt not in names:
            raise ValueError(
                f"Unsupported optimizer name: {opt}. Supported names are: {tuple(sorted(names))}"
            )
        if learning_rate is None:
            raise ValueError("learning_rate must be specified when opt is string.")


def get_optimizer_instance(opt: Any, learning_rate: float | None = None) -> Any:
    """A `tf.compat.v1.train.Optimizer` for `opt`, as 2.15's v1 canned estimators chose it.

    Args:
        opt: a name (`'Adagrad'`, `'Adam'`, `'Ftrl'`, `'RMSProp'`, `'SGD'`), an optimizer,
            or a callable returning one.
        learning_rate: the learning rate a name is made with; required for a name.

    Returns:
        The optimizer.

    Raises:
        ValueError: an unknown name, a name without `learning_rate`, or not an optimizer.

    Example:
        >>> get_optimizer_instance("Adagrad", learning_rate=0.05)
    """
    _string_needs_rate(opt, learning_rate, OPTIMIZER_NAMES)
    return _v1_instance(opt, learning_rate)  # type: ignore[arg-type]


def get_optimizer_instance_v2(opt: Any, learning_rate: float | None = None) -> Any:
    """A Keras optimizer for `opt`, as 2.15's v2 canned estimators chose it.

    Args:
        opt: a name (as for `get_optimizer_instance`), a `keras.optimizers.Optimizer`, or a
            callable returning one.
        learning_rate: the learning rate a name is made with; required for a name.

    Returns:
        The Keras optimizer.

    Raises:
        ValueError: an unknown name, a name without `learning_rate`, or not an optimizer.
    """
    _string_needs_rate(opt, learning_rate, _V2_NAMES)
    if isinstance(opt, str):
        return _V2_NAMES[opt](learning_rate=learning_rate)
    if callable(opt) and not isinstance(opt, keras.optimizers.Optimizer):
        opt = opt()
    if not isinstance(opt, keras.optimizers.Optimizer):
        raise ValueError(
            "The given object is not a tf.keras.optimizers.Optimizer instance. Given: "
            f"{opt}. Expected a Keras optimizer, a name in {tuple(sorted(_V2_NAMES))}, or "
            "a callable returning one."
        )
    return opt


def _optimizer_has_default_learning_rate(opt: Any) -> bool:
    """Whether the optimizer class `opt` can be made without a learning rate."""
    import inspect

    try:
        parameter = inspect.signature(opt.__init__).parameters.get("learning_rate")
    except (TypeError, ValueError):
        return False
    return parameter is not None and parameter.default is not inspect.Parameter.empty
