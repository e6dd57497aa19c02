"""Whether the optional packages a support-table row `needs` are installed where `check` runs.

`check` judges the environment it runs in: a use that needs a package this Python cannot
import (tf-slim behind `tf.contrib.slim`, pandas behind `pandas_input_fn`) fails under
`run` here, so it is reported as blocking, with the pip command. Found with
`importlib.util.find_spec`, which imports nothing.
"""

from __future__ import annotations

import importlib.util
import sys
from typing import Any


def missing(module: str) -> bool:
    """True when `import module` would fail in this environment (not imported to know)."""
    try:
        return importlib.util.find_spec(module) is None
    except (ImportError, ValueError):  # a broken package, or sys.modules[module] is None
        return True


def unmet_need(entry: dict[str, Any]) -> tuple[str, str] | None:
    """(note, replacement) when the package `entry["needs"]` is not installed, else None."""
    needs = entry.get("needs")
    if not needs or not missing(needs["module"]):
        return None
    note = (
        f"needs the {needs['package']} package, which is not installed for "
        f"{sys.executable}: the use fails when it runs"
    )
    return note, f"install it: {needs['install']}"
