"""The training bar in a Jupyter kernel: one display output, updated in place.

Keras' `Progbar` redraws its line with `\\r` / `\\b` on stdout. A live kernel shows one line,
but the saved notebook keeps every frame, with the control characters between them (as
nbconvert's HTML and GitHub's viewer show it). Here the bar is one `display_data` output
updated through its display id (IPython's display handles), so a saved notebook holds only
its last state. IPython is imported lazily: it is there only where a kernel runs.
"""

from __future__ import annotations

import sys
import time
from typing import Any

_WIDTH = 20  # as Keras' Progbar
_INTERVAL = 0.1  # seconds between redraws (each is a message to the front end)


def in_jupyter_kernel() -> bool:
    """Whether this process is a Jupyter kernel able to update display outputs (a terminal
    IPython has no kernel and keeps Keras' Progbar)."""
    if "ipykernel" not in sys.modules:
        return False
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


def _duration(seconds: float) -> str:
    whole = int(seconds)
    if whole >= 3600:
        return f"{whole // 3600}:{whole % 3600 // 60:02d}:{whole % 60:02d}"
    if whole >= 60:
        return f"{whole // 60}:{whole % 60:02d}"
    return f"{whole}s"


def _per_step(seconds: float) -> str:
    if seconds >= 1 or seconds == 0:
        return f"{seconds:.0f}s/step"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.0f}ms/step"
    return f"{seconds * 1e6:.0f}us/step"


def format_line(done: int, total: int | None, elapsed: float, values: list, final: bool) -> str:
    """The bar as one line of plain text, laid out as Keras' Progbar (no colours, which a
    saved notebook would keep as escape codes): `300/300 ━━━━━━ 2s 5ms/step - loss: 0.1234`.
    """
    if total:
        filled = min(int(_WIDTH * done / total), _WIDTH)
        line = f"{done:>{len(str(total))}}/{total} " + "━" * filled + "─" * (_WIDTH - filled)
    else:
        line = f"{done:>7}/Unknown"
    per_step = elapsed / done if done else 0.0
    if total and not final:
        line += " " + _duration(per_step * max(total - done, 0))
    else:
        line += " " + _duration(elapsed)
    line += " " + _per_step(per_step)
    for name, value in values:
        line += f" - {name}: " + (f"{value:.4f}" if abs(value) > 1e-3 else f"{value:.4e}")
    return line


class DisplayBar:
    """`update` / `clear` over one display output; same `update` call as Keras' Progbar.

    `clear` empties the output and lets go of it (a log record is about to print below it);
    the next `update` draws the bar in a new output, below the record.
    """

    def __init__(self, target: int | None, started: float | None = None) -> None:
        self._target = target
        self._started = time.time() if started is None else started
        self._handle: Any = None
        self._last_draw = 0.0

    @property
    def started(self) -> float:
        return self._started

    def update(self, current: int, values: list | None = None, finalize: bool = False) -> None:
        now = time.time()
        if not finalize and now - self._last_draw < _INTERVAL:
            return
        self._last_draw = now
        text = format_line(current, self._target, now - self._started, values or [], finalize)
        self._show(text)

    def clear(self) -> None:
        if self._handle is not None:
            self._handle.update({"text/plain": ""}, raw=True)
            self._handle = None
            self._last_draw = 0.0

    def _show(self, text: str) -> None:
        bundle = {"text/plain": text}
        if self._handle is None:
            from IPython.display import display

            self._handle = display(bundle, raw=True, display_id=True)
        else:
            self._handle.update(bundle, raw=True)
