"""`keras-estimator check`: the scan's findings as text or JSON, and the exit status."""

from __future__ import annotations

import json
from collections import Counter

from keras_estimator.migration.scanner import Finding

_MARK = {"supported": "ok", "caveat": "caveat", "unsupported": "UNSUPPORTED", "error": "ERROR"}


def exit_status(findings: list[Finding]) -> int:
    """0 when every use found is supported (caveats included), else 1."""
    return 1 if any(f.status in ("unsupported", "error") for f in findings) else 0


def format_text(findings: list[Finding]) -> str:
    lines = []
    for f in findings:
        where = f"{f.path}:{f.line}" if f.cell is None else f"{f.path}:cell {f.cell}:{f.line}"
        line = f"{where}: [{_MARK[f.status]}] {f.api}"
        if f.note:
            line += f" - {f.note}"
        if f.replacement:
            line += f" Use instead: {f.replacement}"
        lines.append(line)
    counts = Counter(f.status for f in findings)
    lines.append(
        f"{len(findings)} uses found: {counts['supported']} supported, {counts['caveat']} "
        f"supported with a caveat, {counts['unsupported'] + counts['error']} not supported."
    )
    return "\n".join(lines)


def format_json(findings: list[Finding]) -> str:
    return json.dumps(
        {"findings": [f.as_dict() for f in findings], "exit_status": exit_status(findings)},
        indent=1,
    )
