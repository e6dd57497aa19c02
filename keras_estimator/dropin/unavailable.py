"""Names of 2.15's module tree that cannot work on TensorFlow 2.21 with Keras 3.

Such a name still imports (a library that imports it whole, and never uses this part, keeps
working); using it raises `UnavailableError`, which says what the name was, why it cannot
run here, and what to use instead. Each module of `estimator_tree` lists its own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NoReturn


class UnavailableError(NotImplementedError):
    """A name of tf.estimator 2.15 that keras_estimator provides only as this error."""


def _raise(qualified_name: str, reason: str, instead: str) -> NoReturn:
    raise UnavailableError(
        f"{qualified_name} cannot run on TensorFlow 2.21 with Keras 3: {reason}. "
        f"keras_estimator provides the name so that importing it works. Fix: {instead}"
    )


def unavailable_class(qualified_name: str, reason: str, instead: str) -> type:
    """A class whose construction raises `UnavailableError` (subclassing it works).

    Example:
        >>> LinearModel = unavailable_class(
        ...     "canned.linear.LinearModel", "it is a tf.keras 2 model", "use DenseFeatures")
    """
    module, _, name = qualified_name.rpartition(".")

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        _raise(qualified_name, reason, instead)

    return type(
        name,
        (),
        {
            "__init__": __init__,
            "__doc__": f"Unavailable: {reason}.",
            "__module__": f"tensorflow_estimator.python.estimator.{module}",
        },
    )


def unavailable_function(qualified_name: str, reason: str, instead: str) -> Callable[..., Any]:
    """A function that raises `UnavailableError` when called."""
    name = qualified_name.rpartition(".")[2]

    def unavailable(*args: Any, **kwargs: Any) -> NoReturn:
        _raise(qualified_name, reason, instead)

    unavailable.__name__ = unavailable.__qualname__ = name
    unavailable.__doc__ = f"Unavailable: {reason}."
    return unavailable
