"""2.15's `estimator_export`: the decorator that registered a name in the generated
`tf.estimator` API. keras_estimator's API is written by hand, so the decorator records
the names it is given on the object and returns it unchanged."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

T = TypeVar("T")


class estimator_export:  # noqa: N801 - 2.15's name
    """`@estimator_export("estimator.Foo", v1=[...])`: marks `Foo`'s API names.

    Example:
        >>> @estimator_export("estimator.MyHook")
        ... class MyHook(tf.estimator.SessionRunHook): ...
    """

    def __init__(self, *args: str, v1: Sequence[str] | None = None) -> None:
        self._names = args
        self._names_v1 = tuple(v1) if v1 is not None else args

    def __call__(self, func: T) -> T:
        target: Any = func
        try:
            target._estimator_api_names = self._names
            target._estimator_api_names_v1 = self._names_v1
        except AttributeError:
            pass  # a builtin or slotted object: nothing to record on
        return func
