"""Which arguments a user function (model_fn, input_fn) names."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable


def fn_args(fn: Callable) -> tuple[str, ...]:
    """Names of the arguments `fn` accepts, unwrapping partials and bound methods.

    Arguments already bound by a `functools.partial` are left out, as tf.estimator did.
    """
    bound: set[str] = set()
    target = fn
    while isinstance(target, functools.partial):
        bound.update(target.keywords or {})
        positional = len(target.args)
        inner_params = list(inspect.signature(target.func).parameters)
        bound.update(inner_params[:positional])
        target = target.func
    try:
        params = inspect.signature(target).parameters
    except (TypeError, ValueError) as exc:
        raise TypeError(
            f"Cannot inspect the arguments of {fn!r}: {exc}. Expected a Python function (or "
            "a functools.partial of one). Fix: wrap it, e.g. lambda features, labels, mode: "
            f"fn(features, labels, mode). Received: type(fn)={type(fn).__name__}"
        ) from exc
    names = [
        name
        for name, p in params.items()
        if p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
        and name not in bound
    ]
    if inspect.ismethod(fn) and names and names[0] == "self":
        names = names[1:]
    return tuple(names)


def required_fn_args(fn: Callable) -> tuple[str, ...]:
    """The subset of `fn_args(fn)` that has no default value."""
    target = fn
    while isinstance(target, functools.partial):
        target = target.func
    params = inspect.signature(target).parameters
    names = set(fn_args(fn))
    return tuple(
        n for n, p in params.items() if n in names and p.default is inspect.Parameter.empty
    )
