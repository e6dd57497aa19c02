"""The one way keras_estimator replaces an attribute of TensorFlow or Keras.

Replica threads of a MirroredStrategy trace the model_fn at the same time, each entering
and leaving the same patches in interleaved order; a plain save/restore would then leave
a patch installed for good. Patches here are reference-counted and thread-safe: the first
holder installs the replacement, the last release restores what was there before (or
removes the attribute when there was none). Scoped patches use `patched(...)` as a context
manager; patches that live until an explicit undo (`install()`, the v1 layers) hold an
`AttributePatch`.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

_lock = threading.Lock()
_MISSING = object()
_active: dict[tuple[int, str], list] = {}  # (id(owner), attr) -> [count, original, owner]


class AttributePatch:
    """`owner.attr = replacement` until `undo()`; shares the reference count of `patched`.

    With `only_if_missing`, nothing is installed (and `applied` is False) when `owner`
    already defines `attr` itself: `install()` never replaces what exists.
    """

    def __init__(self, owner: Any, attr: str, replacement: Any, only_if_missing: bool = False):
        self._key = (id(owner), attr)
        self._owner, self._attr = owner, attr
        self.applied = False
        with _lock:
            entry = _active.get(self._key)
            if entry is None:
                own = vars(owner).get(attr, _MISSING) if hasattr(owner, "__dict__") else _MISSING
                if only_if_missing and own is not _MISSING:
                    return
                entry = _active[self._key] = [0, own, owner]
                setattr(owner, attr, replacement)
            entry[0] += 1
            self.applied = True

    def undo(self) -> None:
        """Releases this holder; the last one restores the original. Idempotent."""
        with _lock:
            if not self.applied:
                return
            self.applied = False
            entry = _active[self._key]
            entry[0] -= 1
            if entry[0] == 0:
                del _active[self._key]
                if entry[1] is _MISSING:
                    with contextlib.suppress(AttributeError):
                        delattr(self._owner, self._attr)
                else:
                    setattr(self._owner, self._attr, entry[1])


@contextlib.contextmanager
def patched(owner: Any, attr: str, replacement: Any) -> Iterator[None]:
    """`owner.attr` is `replacement` inside the block (reference-counted across threads)."""
    patch = AttributePatch(owner, attr, replacement)
    try:
        yield
    finally:
        patch.undo()


def active_patches() -> list[tuple[Any, str]]:
    """What is replaced right now, as `(owner, attribute)`: for tests and diagnostics."""
    with _lock:
        return [(entry[2], key[1]) for key, entry in _active.items()]
