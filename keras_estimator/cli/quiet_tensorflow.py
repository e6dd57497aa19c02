"""Importing TensorFlow for a command without its C++ start-up lines.

`TF_CPP_MIN_LOG_LEVEL` (set to 2 here unless the user set it) must be in the environment
before TensorFlow loads. In TF 2.21 it still does not cover the lines written while the
shared libraries load, before absl's logging is initialised (`I0000 ... port.cc:153]
oneDNN custom operations are on`, `cudart_stub.cc:31] Could not find cuda drivers`, and
`WARNING: All log messages before absl::InitializeLog() is called are written to STDERR`):
for the import, file descriptor 2 goes to a temporary file, and its lines are written back
except those below the level. Everything else (Python warnings, errors) comes through.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile

_ABSL_LINE = re.compile(r"^([IWEF])\d{4} ")  # I0000 00:00:17.. 123 port.cc:153] ...
_SEVERITY = {"I": 0, "W": 1, "E": 2, "F": 3}
_PRE_INIT = "WARNING: All log messages before absl::InitializeLog() is called"


def log_level() -> int:
    """TF_CPP_MIN_LOG_LEVEL as an int (set to 2 first when the user has not set it)."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    try:
        return int(os.environ["TF_CPP_MIN_LOG_LEVEL"])
    except ValueError:
        return 0


def keep(line: str, level: int) -> bool:
    """Whether a line TensorFlow's libraries wrote while loading is shown at `level`."""
    if line.startswith(_PRE_INIT):
        return level < 1
    match = _ABSL_LINE.match(line)
    return match is None or _SEVERITY[match.group(1)] >= level


def import_tensorflow_quietly() -> None:
    """Imports TensorFlow; its load-time C++ lines below TF_CPP_MIN_LOG_LEVEL are dropped.

    Example:

        >>> import_tensorflow_quietly()  # then `import tensorflow as tf` is silent
    """
    level = log_level()
    if level < 1 or "tensorflow" in sys.modules:
        import tensorflow  # noqa: F401

        return
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile(mode="w+b") as captured:
        os.dup2(captured.fileno(), 2)
        try:
            import tensorflow  # noqa: F401
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            captured.seek(0)
            text = captured.read().decode("utf-8", "replace")
            lines = [ln for ln in text.splitlines(keepends=True) if keep(ln, level)]
            sys.stderr.write("".join(lines))
            sys.stderr.flush()
