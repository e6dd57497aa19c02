"""The migration report: what of a legacy codebase keras_estimator runs, before running it."""

from keras_estimator.migration.report import exit_status, format_json, format_text
from keras_estimator.migration.scanner import (
    FileReport,
    Finding,
    lookup,
    scan,
    scan_paths,
    support_table,
)
from keras_estimator.migration.tf1_api import uses_tf1_api

__all__ = [
    "FileReport",
    "Finding",
    "exit_status",
    "format_json",
    "format_text",
    "lookup",
    "scan",
    "scan_paths",
    "support_table",
    "uses_tf1_api",
]
