"""`arg_scope` support for our contrib layers: tf-slim's `arg_scope` applies to them.

tf-slim keeps the current scope in its own stack; a layer function decorated here reads it
when tf-slim is loaded (nothing is imported otherwise) and tf-slim learns the function when
`register_with_tf_slim()` runs (from `tf.contrib.slim` / `tf.contrib.framework.arg_scope`).
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Any

_SCOPED: list[Callable] = []
_SLIM_ARG_SCOPE = "tf_slim.ops.arg_scope"


def arg_scoped(func: Callable) -> Callable:
    """Makes `func` take its default keyword arguments from tf-slim's current arg_scope."""
    key = f"{func.__module__}.{func.__name__}"

    @functools.wraps(func)
    def with_scope(*args: Any, **kwargs: Any) -> Any:
        slim_scope = sys.modules.get(_SLIM_ARG_SCOPE)
        if slim_scope is not None:
            defaults = slim_scope.current_arg_scope().get(key)
            if defaults:
                kwargs = {**defaults, **kwargs}
        return func(*args, **kwargs)

    # tf-slim's key for a function in arg_scope([...]); mypy types no function attributes.
    with_scope._key_op = key  # type: ignore[attr-defined]
    _SCOPED.append(with_scope)
    return with_scope


def register_with_tf_slim(arg_scope_module: Any) -> None:
    """Tells tf-slim's `arg_scope` that our layer functions accept it."""
    for func in _SCOPED:
        arg_scope_module._add_op(func)  # noqa: SLF001  (tf-slim's own registry)


__all__ = ["arg_scoped", "register_with_tf_slim"]
