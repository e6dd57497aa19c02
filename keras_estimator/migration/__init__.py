"""The migration report: what of a legacy codebase keras_estimator runs, before running it."""

from keras_estimator.migration.report import exit_status, format_json, format_text
from keras_estimator.migration.scanner import Finding, lookup, scan_paths, support_table

__all__ = [
    "Finding",
    "exit_status",
    "format_json",
    "format_text",
    "lookup",
    "scan_paths",
    "support_table",
]
