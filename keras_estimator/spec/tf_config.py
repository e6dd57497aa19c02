"""Reading the TF_CONFIG environment variable strictly.

tf.estimator 2.15 read TF_CONFIG with `json.loads` and `int(task["index"])`: a task index
of 0.9 or -0.5 was truncated (-0.5 made the task the chief), and a task that was not an
object, NaN, 1e999 or deeply nested JSON ended in an AttributeError, OverflowError or
RecursionError far from the cause. Here every wrong type or value is a ValueError that
names TF_CONFIG and the field; what 2.15 accepted (an index given as "1") still works.
"""

from __future__ import annotations

import json
import math
import os
from typing import Any

_EXAMPLE = '{"cluster": {"worker": ["host:port"]}, "task": {"type": "worker", "index": 0}}'
_MAX_DEPTH = 32  # a real TF_CONFIG nests 4 levels; deeper is a mistake (or an attack)


def _refuse(what: str, received: str) -> ValueError:
    return ValueError(
        f"TF_CONFIG {what}. Expected e.g. {_EXAMPLE}. Fix: correct the TF_CONFIG environment "
        f"variable, or unset it to train on this machine alone. Received: {received}"
    )


def _no_constant(name: str) -> Any:
    raise _refuse(f"holds {name}, which is not a JSON number", f"{name} in TF_CONFIG")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _refuse("holds a number too large for a float", f"{text} in TF_CONFIG")
    return value


def _depth(value: Any, limit: int) -> int:
    if limit < 0:
        return 0
    if isinstance(value, dict):
        return 1 + max((_depth(v, limit - 1) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(v, limit - 1) for v in value), default=0)
    return 0


def _task_index(task: dict) -> int:
    index = task.get("index", 0)
    if isinstance(index, bool):
        raise _refuse(
            'has a task "index" that is a boolean', f"TF_CONFIG['task']['index']={index!r}"
        )
    if isinstance(index, str) and index.strip().lstrip("-").isdigit():
        index = int(index)  # tf.estimator 2.15 took int("1")
    if isinstance(index, float) and index.is_integer():
        index = int(index)
    if not isinstance(index, int):
        raise _refuse(
            'has a task "index" that is not a whole number',
            f"TF_CONFIG['task']['index']={index!r}",
        )
    return index


def read_tf_config(raw: str | None = None) -> dict:
    """TF_CONFIG (the environment's unless `raw` is given) as a dict, checked field by field:
    an object; "cluster" an object of jobs, each a list (or an object) of addresses;
    "task" an object whose "type" is a string and "index" a whole number (normalised to
    int); finite numbers only."""
    raw = os.environ.get("TF_CONFIG", "") if raw is None else raw
    if not raw or not raw.strip():
        return {}
    try:
        config = json.loads(raw, parse_constant=_no_constant, parse_float=_finite)
    except RecursionError:
        raise _refuse("nests too deeply", f"TF_CONFIG of {len(raw)} characters") from None
    except json.JSONDecodeError as exc:
        raise _refuse(f"is not valid JSON ({exc})", f"TF_CONFIG={raw[:200]!r}") from exc
    if not isinstance(config, dict):
        raise _refuse("must hold a JSON object", f"TF_CONFIG={config!r:.200}")
    if _depth(config, _MAX_DEPTH) > _MAX_DEPTH:
        raise _refuse(f"nests more than {_MAX_DEPTH} levels", f"TF_CONFIG={raw[:200]!r}")
    cluster = config.get("cluster")
    if cluster is not None:
        if not isinstance(cluster, dict):
            raise _refuse(
                'has a "cluster" that is not an object', f"TF_CONFIG['cluster']={cluster!r:.200}"
            )
        for job, addresses in cluster.items():
            if not isinstance(addresses, list | dict) or not all(
                isinstance(a, str)
                for a in (addresses.values() if isinstance(addresses, dict) else addresses)
            ):
                raise _refuse(
                    f'has a cluster job "{job}" that is not a list of "host:port" strings',
                    f"TF_CONFIG['cluster'][{job!r}]={addresses!r:.200}",
                )
    task = config.get("task")
    if task is not None:
        if not isinstance(task, dict):
            raise _refuse('has a "task" that is not an object', f"TF_CONFIG['task']={task!r:.200}")
        task_type = task.get("type")
        if task_type is not None and not isinstance(task_type, str):
            raise _refuse(
                'has a task "type" that is not a string', f"TF_CONFIG['task']['type']={task_type!r}"
            )
        if "index" in task:
            config = dict(config, task=dict(task, index=_task_index(task)))
    return config
