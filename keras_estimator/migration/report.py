"""`keras-estimator check`: the scan's reports as text or JSON, and the exit status.

The JSON document (`--format json`) is described in the README's "Checking a codebase"
section; `SCHEMA` names its version.
"""

from __future__ import annotations

import json
from collections import Counter

from keras_estimator.migration import v1_namespace
from keras_estimator.migration.scanner import STATUSES, FileReport, Finding
from keras_estimator.migration.tf1_api import tf1_only_prefix

SCHEMA = "keras-estimator-check/2"
_MARK = {"supported": "ok", "caveat": "caveat", "tf1_mode": "TF1 MODE",
         "unsupported": "UNSUPPORTED", "error": "ERROR", "skipped": "SKIPPED"}  # fmt: skip
VERDICTS = ("ok", "caveats", "tf1_mode", "blocked", "unreadable", "skipped", "no_tensorflow")
_VERDICT_WORDS = {"ok": "ok", "caveats": "with caveats", "tf1_mode": "TF1 mode (run only)",
                  "blocked": "blocked", "unreadable": "unreadable", "skipped": "skipped",
                  "no_tensorflow": "without TensorFlow"}  # fmt: skip


def _findings(reports: list[FileReport]) -> list[Finding]:
    return [f for r in reports for f in r.findings]


def exit_status(reports: list[FileReport] | list[Finding]) -> int:
    """1 when a use is unsupported or a file unreadable, else 0 (caveats, TF1 mode and
    skipped files included: they are reported, and `keras-estimator run` runs them)."""
    findings = [
        f for item in reports for f in (item.findings if isinstance(item, FileReport) else [item])
    ]
    return 1 if any(f.status in ("unsupported", "error") for f in findings) else 0


def _where(f: Finding) -> str:
    return f"{f.path}:{f.line}" if f.cell is None else f"{f.path}:cell {f.cell}:{f.line}"


def _finding_line(f: Finding) -> str:
    if f.status in ("skipped", "error") and f.api.startswith("<") and f.line == 0:
        return f"{f.path}: [{_MARK[f.status]}] {f.note}"
    line = f"{_where(f)}: [{_MARK[f.status]}] {f.api}"
    if f.note:
        line += f" - {f.note.rstrip('.')}"
    if f.replacement:
        line += f". Use instead: {f.replacement}"
    return line


def _tf1_name(api: str) -> str:
    if api.startswith("tf."):
        prefix = tf1_only_prefix(api[3:])
        if prefix:
            return "tf." + prefix
    return api


def verdict_text(report: FileReport) -> str:
    """One line: what `check` concludes about the file."""
    text = _own_verdict_text(report)
    if report.imported_by:
        text += f" (checked as imported by {report.imported_by})"
    if any(v1_namespace.V1_NOTE in f.note for f in report.findings):
        text += f"; its canned estimators are tf.compat.v1.estimator's: {v1_namespace.V1_FIX}"
    worse = report.imported_verdicts()
    if worse:
        shown = ", ".join(f"{path} ({verdict})" for path, verdict in sorted(worse.items())[:4])
        more = f" and {len(worse) - 4} more" if len(worse) > 4 else ""
        text += f"; VERDICT {report.verdict.upper()} through its imports: {shown}{more}"
    return text


def _own_verdict_text(report: FileReport) -> str:
    verdict = report.own_verdict
    counts = Counter(f.status for f in report.findings)
    if verdict in ("unreadable", "skipped"):
        first = next(f for f in report.findings if f.status in ("error", "skipped"))
        where = "" if report.reason else f"line {first.line}: "
        if first.cell is not None:
            where = f"cell {first.cell}, {where}"
        return f"{report.path}: {verdict.upper()}: {where}{report.reason or first.note}"
    if verdict == "blocked":
        first = next(f for f in report.findings if f.status in ("unsupported", "error"))
        n = counts["unsupported"] + counts["error"]
        return (
            f"{report.path}: BLOCKED: {n} unsupported use{'s' * (n != 1)} (first: "
            f"{_where(first)} {first.api}); fails when that code runs"
        )
    if verdict == "tf1_mode":
        names = sorted({_tf1_name(f.api) for f in report.findings if f.status == "tf1_mode"})
        shown = ", ".join(names[:8]) + (", ..." if len(names) > 8 else "")
        n = counts["tf1_mode"]
        return (
            f"{report.path}: TF1 API on a TF2 import ({n} use{'s' * (n != 1)}: {shown}): runs "
            "under `keras-estimator run` (TF1 mode); for direct use with install(), "
            "`import tensorflow.compat.v1 as tf`"
        )
    if verdict == "caveats":
        return f"{report.path}: runs, with {counts['caveat']} caveat(s) (see above)"
    return f"{report.path}: ok"


def summary(reports: list[FileReport]) -> dict[str, object]:
    verdicts = Counter(r.verdict for r in reports)
    statuses = Counter(f.status for f in _findings(reports))
    return {
        "files": len(reports),
        "verdicts": {v: verdicts[v] for v in VERDICTS},
        "references": sum(r.references for r in reports),
        "findings": {s: statuses[s] for s in STATUSES},
    }


def summary_line(reports: list[FileReport]) -> str:
    data = summary(reports)
    verdicts = ", ".join(f"{n} {_VERDICT_WORDS[v]}" for v, n in data["verdicts"].items())  # type: ignore[attr-defined]
    statuses = ", ".join(f"{n} {_MARK[s].lower()}" for s, n in data["findings"].items())  # type: ignore[attr-defined]
    return (
        f"Summary: {data['files']} file{'' if data['files'] == 1 else 's'}: {verdicts}. "
        f"{data['references']} TensorFlow reference{'' if data['references'] == 1 else 's'}; "
        f"findings: {statuses}."
    )


def format_text(reports: list[FileReport]) -> str:
    """Every finding, then one verdict line per file that uses TensorFlow, then the summary."""
    lines = [_finding_line(f) for f in _findings(reports)]
    verdicts = [verdict_text(r) for r in reports if r.verdict != "no_tensorflow" or r.through]
    if verdicts:
        lines += ["", "Files:", *verdicts]
    lines += ["", summary_line(reports)]
    return "\n".join(lines).lstrip("\n")


def format_json(reports: list[FileReport]) -> str:
    """The JSON document described in the README (schema `keras-estimator-check/2`)."""
    return json.dumps(
        {
            "schema": SCHEMA,
            "files": [r.as_dict() for r in reports],
            "findings": [f.as_dict() for f in _findings(reports)],
            "summary": summary(reports),
            "exit_status": exit_status(reports),
        },
        indent=1,
    )
