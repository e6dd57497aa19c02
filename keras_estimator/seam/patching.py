"""Temporary replacement of a TensorFlow attribute while a model_fn is traced.

Replica threads of a MirroredStrategy trace the model_fn at the same time, each entering
and leaving the same patches in interleaved order; a plain save/restore would then leave
a patch installed for good. Patches here are reference-counted: the first entry installs
the replacement, the last exit restores the original.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

_lock = threading.Lock()
_active: dict[tuple[int, str], list] = {}  # (id(owner), attr) -> [count, original]


@contextlib.contextmanager
def patched(owner: Any, attr: str, replacement: Any) -> Iterator[None]:
    key = (id(owner), attr)
    with _lock:
        entry = _active.get(key)
        if entry is None:
            entry = _active[key] = [0, getattr(owner, attr)]
            setattr(owner, attr, replacement)
        entry[0] += 1
    try:
        yield
    finally:
        with _lock:
            entry[0] -= 1
            if entry[0] == 0:
                setattr(owner, attr, entry[1])
                del _active[key]
