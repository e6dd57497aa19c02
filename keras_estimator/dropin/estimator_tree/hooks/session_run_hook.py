"""2.15's `hooks.session_run_hook`: the hook interface and its call records."""

from tensorflow.compat.v1.train import (
    SessionRunArgs,
    SessionRunContext,
    SessionRunHook,
    SessionRunValues,
)

__all__ = ["SessionRunArgs", "SessionRunContext", "SessionRunHook", "SessionRunValues"]
