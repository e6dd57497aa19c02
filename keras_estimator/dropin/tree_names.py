"""What the namespace-like modules of 2.15's tree (`estimator_lib`, `export.export_lib`,
`hooks.basic_session_run_hooks`, ...) hold: every public name of one of our modules.

2.15 filled these with `from x import *`; the mirror fills them from the module's `__all__`
(or its public names), leaving out the names of our own submodules, which would shadow the
tree's submodules of the same name (`canned`, `export`, ...).
"""

from __future__ import annotations

import importlib
import types
from typing import Any


def public_names(module_name: str) -> dict[str, Any]:
    """name -> object for each public, non-module name of `module_name`."""
    module = importlib.import_module(module_name)
    names = getattr(module, "__all__", None) or [n for n in vars(module) if not n[:1] == "_"]
    found = {name: getattr(module, name) for name in names}
    return {n: v for n, v in found.items() if not isinstance(v, types.ModuleType)}
