"""2.15's `tools/analytics.py`: usage-tracking hooks that did nothing outside Google.

tf.estimator called them on its own tools and on numerical failures; the open-source build
tracked nothing, and neither does keras_estimator. Both accept their arguments and return
None, so a library that calls them keeps working.

Example:
    >>> track_usage("my_tool", ["conversion"])  # does nothing
"""

from __future__ import annotations

from typing import Any


def track_usage(tool_id: str, tags: list[str]) -> None:
    """Does nothing: no usage of tools is tracked (2.15's open-source build tracked none).

    Args:
        tool_id: A string naming the tool that was used.
        tags: String tags that would have been attached to the record.

    Returns:
        None.

    Example:
        >>> track_usage("checkpoint_converter", ["dnn"])
    """
    del tool_id, tags


def track_numerical_issues(exc_info: Any) -> None:
    """Does nothing: numerical failures are not reported anywhere (as in 2.15's build).

    Args:
        exc_info: What `sys.exc_info()` returned: `(type, value, traceback)`.

    Returns:
        None.

    Example:
        >>> import sys
        >>> try:
        ...     raise FloatingPointError("NaN loss")
        ... except FloatingPointError:
        ...     track_numerical_issues(sys.exc_info())
    """
    del exc_info
