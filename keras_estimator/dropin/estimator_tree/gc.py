"""2.15's `gc`: choosing which export directories to keep.

A `Path` is `(path, export_version)`; a filter takes a list of Paths and returns those to
keep; filters compose with `_union` and `_negation`. EasyRec and exporters of other
libraries delete what `_negation(_largest_export_versions(n))` returns.

Example:
    >>> paths = _get_paths("export", parser=lambda p: p._replace(
    ...     export_version=int(os.path.basename(p.path))))
    >>> to_delete = _negation(_largest_export_versions(5))(paths)
"""

from __future__ import annotations

import collections
import math
import os
from collections.abc import Callable

import tensorflow as tf

Path = collections.namedtuple("Path", "path export_version")
PathFilter = Callable[[list], list]


def _largest_export_versions(n: int) -> PathFilter:
    """A filter keeping the `n` Paths of largest export version."""

    def keep_largest(paths: list) -> list:
        versioned = [p for p in paths if p.export_version is not None]
        return sorted(sorted(versioned, key=lambda p: p.export_version)[-n:]) if n > 0 else []

    return keep_largest


def _one_of_every_n_export_versions(n: int) -> PathFilter:
    """A filter keeping, per interval of `n` versions, the largest version in it."""

    def keep(paths: list) -> list:
        chosen: dict[float, Path] = {}
        for path in paths:
            if path.export_version is None:
                continue
            interval = math.floor((path.export_version - 1) / n) if n else 0
            current = chosen.get(interval)
            if current is None or current.export_version < path.export_version:
                chosen[interval] = path
        return sorted(chosen.values())

    return keep


def _mod_export_version(n: int) -> PathFilter:
    """A filter keeping the Paths whose export version is a multiple of `n`."""

    def keep(paths: list) -> list:
        return sorted(
            p for p in paths if p.export_version is not None and p.export_version % n == 0
        )

    return keep


def _union(lf: PathFilter, rf: PathFilter) -> PathFilter:
    """A filter keeping what either filter keeps."""

    def keep(paths: list) -> list:
        return sorted(set(lf(paths)) | set(rf(paths)))

    return keep


def _negation(f: PathFilter) -> PathFilter:
    """A filter keeping what `f` does not."""

    def keep(paths: list) -> list:
        kept = set(f(paths))
        return sorted(set(paths) - kept)

    return keep


def _get_paths(base_dir: str, parser: Callable[[Path], Path | None]) -> list:
    """The Paths in `base_dir`, each passed through `parser` (None drops it), sorted."""
    paths = []
    for raw in tf.io.gfile.listdir(base_dir):
        name = tf.compat.as_str_any(raw).rstrip("/")
        parsed = parser(Path(os.path.join(tf.compat.as_str_any(base_dir), name), None))
        if parsed:
            paths.append(parsed)
    return sorted(paths)
