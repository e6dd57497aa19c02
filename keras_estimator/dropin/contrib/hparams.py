"""`tf.contrib.training.HParams`: named, typed hyperparameters with TF1's string syntax.

A re-implementation of the documented behaviour: `HParams(learning_rate=0.1, layers=[64,
32])`, attribute access, `parse("learning_rate=0.3,layers=[128,64]")` with each value cast
to the type it was declared with (`int` never from a float, `bool` never from a number,
`str` never from a number), `values()`, `add_hparam`, `set_hparam`, `del_hparam`,
`override_from_dict`, `to_json` / `parse_json`, `get(key, default)`. The protocol-buffer
forms (`hparam_def=`, `to_proto`, `from_proto`) are not provided.
"""

from __future__ import annotations

import json
import numbers
import re
from typing import Any

_PARAM_RE = re.compile(
    r"""
    (?P<name>[a-zA-Z][\w\.]*)        # name: "learning_rate" or "x"
    (\[\s*(?P<index>\d+)\s*\])?      # optional index: "arr[1]"
    \s*=\s*
    ((?P<val>[^,\[]*)                # one value: "0.1"
     |
     \[(?P<vals>[^\]]*)\])           # a list: "[1, 2, 3]"
    ($|,\s*)""",
    re.VERBOSE,
)


def _parse_fail(name: str, var_type: type, value: Any, values: str) -> None:
    raise ValueError(
        f"Could not parse hparam '{name}' of type '{var_type.__name__}' with value "
        f"'{value}' in {values}"
    )


def _reuse_fail(name: str, values: str) -> None:
    raise ValueError(f"Multiple assignments to variable '{name}' in {values}")


def _parser(name: str, type_: type, values: str) -> Any:
    if type_ is not bool:
        return type_

    def parse_bool(value: str) -> bool:
        if value in ("true", "True"):
            return True
        if value in ("false", "False"):
            return False
        try:
            return bool(int(value))
        except ValueError:
            _parse_fail(name, type_, value, values)
        raise AssertionError  # unreachable

    return parse_bool


def parse_values(values: str, type_map: dict[str, type], ignore_unknown: bool = False
                 ) -> dict[str, Any]:  # fmt: skip
    """`"a=1,b=[1,2],c[1]=3"` -> `{"a": 1, "b": [1, 2], "c": {1: 3}}`, typed by `type_map`.

    Example:
        >>> parse_values("lr=0.1,layers=[8,4]", {"lr": float, "layers": int})
        {'lr': 0.1, 'layers': [8, 4]}
    """
    results: dict[str, Any] = {}
    pos = 0
    while pos < len(values):
        match = _PARAM_RE.match(values, pos)
        if not match:
            raise ValueError(f"Malformed hyperparameter value: {values[pos:]}")
        pos = match.end()
        groups = match.groupdict()
        name = groups["name"]
        if name not in type_map:
            if ignore_unknown:
                continue
            raise ValueError(f"Unknown hyperparameter type for {name}")
        type_ = type_map[name]
        parse = _parser(name, type_, values)
        if groups["val"] is not None:
            try:
                parsed = parse(groups["val"])
            except ValueError:
                _parse_fail(name, type_, groups["val"], values)
            if not groups["index"]:
                if name in results:
                    _reuse_fail(name, values)
                results[name] = parsed
            else:
                if name in results and not isinstance(results[name], dict):
                    _reuse_fail(name, values)
                indexed = results.setdefault(name, {})
                index = int(groups["index"])
                if index in indexed:
                    _reuse_fail(f"{name}[{index}]", values)
                indexed[index] = parsed
        elif groups["vals"] is not None:
            if groups["index"] is not None:
                raise ValueError("Assignment of a list to a list index.")
            if name in results:
                _reuse_fail(name, values)
            elements = [e for e in re.split("[ ,]", groups["vals"]) if e]
            try:
                results[name] = [parse(e) for e in elements]
            except ValueError:
                _parse_fail(name, type_, groups["vals"], values)
        else:
            _parse_fail(name, type_, "", values)
    return results


def _cast(name: str, param_type: type[Any], value: Any) -> Any:
    """`value` as `param_type`, refusing lossy or surprising casts as TF1 did."""
    fail = f"Could not cast hparam '{name}' of type '{param_type}' from value {value!r}"
    if type(value) is param_type:
        return value
    if issubclass(param_type, type(None)):
        return value
    if issubclass(param_type, (str, bytes)) and not isinstance(value, (str, bytes)):
        raise ValueError(fail)
    if issubclass(param_type, bool) != isinstance(value, bool):
        raise ValueError(fail)
    if issubclass(param_type, numbers.Integral) and not isinstance(value, numbers.Integral):
        raise ValueError(fail)
    if issubclass(param_type, numbers.Number) and not isinstance(value, numbers.Number):
        raise ValueError(fail)
    return param_type(value)


def _without_callables(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_callables(v) for k, v in value.items() if not callable(v)}
    if isinstance(value, list):
        return [_without_callables(v) for v in value if not callable(v)]
    return value


class HParams:
    """Hyperparameters as attributes, each with the type of its first value.

    Example:
        >>> hparams = HParams(learning_rate=0.1, num_hidden_units=100, layers=[64, 32])
        >>> hparams.parse("learning_rate=0.3,layers=[128,64]").learning_rate
        0.3
    """

    _HAS_DYNAMIC_ATTRIBUTES = True  # for pytype, as TF1's class said

    def __init__(self, hparam_def: Any = None, model_structure: Any = None, **kwargs: Any):
        self._hparam_types: dict[str, tuple[type, bool]] = {}
        self._model_structure = model_structure
        if hparam_def is not None:
            raise NotImplementedError(
                "HParams(hparam_def=...) (an HParamDef protocol buffer) is not supported by "
                "keras_estimator. Fix: pass the values as keyword arguments, or use "
                "parse_json. Received: hparam_def=<HParamDef>"
            )
        for name, value in kwargs.items():
            self.add_hparam(name, value)

    def add_hparam(self, name: str, value: Any) -> None:
        """Adds `name` with `value`; a list makes a multi-valued hyperparameter."""
        if getattr(self, name, None) is not None:
            raise ValueError(f"Hyperparameter name is reserved: {name}")
        if isinstance(value, (list, tuple)):
            if not value:
                raise ValueError(f"Multi-valued hyperparameters cannot be empty: {name}")
            self._hparam_types[name] = (type(value[0]), True)
        else:
            self._hparam_types[name] = (type(value), False)
        setattr(self, name, value)

    def set_hparam(self, name: str, value: Any) -> None:
        """Sets an existing hyperparameter, cast to its type (KeyError if unknown)."""
        param_type, is_list = self._hparam_types[name]
        if isinstance(value, list):
            if not is_list:
                raise ValueError(f"Must not pass a list for single-valued parameter: {name}")
            setattr(self, name, [_cast(name, param_type, v) for v in value])
        elif isinstance(value, dict) and is_list:  # "arr[1]=5" from parse()
            current = list(getattr(self, name))
            for index, item in value.items():
                if index >= len(current):
                    raise ValueError(
                        f"Index {index} is out of range for hparam '{name}' of length "
                        f"{len(current)}. Fix: assign the whole list. Received: {name}[{index}]"
                    )
                current[index] = _cast(name, param_type, item)
            setattr(self, name, current)
        else:
            if is_list:
                raise ValueError(f"Must pass a list for multi-valued parameter: {name}.")
            setattr(self, name, _cast(name, param_type, value))

    def del_hparam(self, name: str) -> None:
        """Removes `name` if present."""
        if hasattr(self, name):
            delattr(self, name)
            del self._hparam_types[name]

    def parse(self, values: str) -> HParams:
        """Overrides from `"name=value,list=[1,2]"` (values cast to each declared type)."""
        type_map = {name: param_type for name, (param_type, _) in self._hparam_types.items()}
        return self.override_from_dict(parse_values(values, type_map))

    def override_from_dict(self, values_dict: dict[str, Any]) -> HParams:
        """`set_hparam` for each item; returns self."""
        for name, value in values_dict.items():
            self.set_hparam(name, value)
        return self

    def set_model_structure(self, model_structure: Any) -> None:
        self._model_structure = model_structure

    def get_model_structure(self) -> Any:
        return self._model_structure

    def to_json(self, indent: int | None = None, separators: Any = None,
                sort_keys: bool = False) -> str:  # fmt: skip
        """The values as JSON (callables left out)."""
        return json.dumps(_without_callables(self.values()), indent=indent,
                          separators=separators, sort_keys=sort_keys)  # fmt: skip

    def parse_json(self, values_json: str) -> HParams:
        """Overrides from a JSON object of names to values; returns self."""
        return self.override_from_dict(json.loads(values_json))

    def values(self) -> dict[str, Any]:
        """`{name: value}` of every hyperparameter."""
        return {name: getattr(self, name) for name in self._hparam_types}

    def get(self, key: str, default: Any = None) -> Any:
        """The value of `key`, or `default`; a default of an incompatible type raises."""
        if key not in self._hparam_types:
            return default
        if default is not None:
            param_type, is_list = self._hparam_types[key]
            type_str = f"list<{param_type}>" if is_list else str(param_type)
            fail = f"Hparam '{key}' of type '{type_str}' is incompatible with default={default}"
            if is_list != isinstance(default, list):
                raise ValueError(fail)
            try:
                for item in default if is_list else [default]:
                    _cast(key, param_type, item)
            except ValueError as exc:
                raise ValueError(f"{fail}. {exc}") from exc
        return getattr(self, key)

    def to_proto(self, export_scope: Any = None) -> Any:
        raise NotImplementedError(
            "HParams.to_proto is not supported by keras_estimator. Fix: use to_json(). "
            f"Received: export_scope={export_scope!r}"
        )

    @staticmethod
    def from_proto(hparam_def: Any, import_scope: Any = None) -> HParams:
        raise NotImplementedError(
            "HParams.from_proto is not supported by keras_estimator. Fix: use "
            "HParams().parse_json(...). Received: hparam_def=<HParamDef>"
        )

    def __contains__(self, key: str) -> bool:
        return key in self._hparam_types

    def __str__(self) -> str:
        return str(sorted(self.values().items()))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self})"


__all__ = ["HParams", "parse_values"]
