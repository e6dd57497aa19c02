"""The corpus table (markdown) and its summary figures."""

from __future__ import annotations

from tools.corpus.recipe import Recipe
from tools.corpus.runner import Outcome, metrics_comparable

MARK = {"pass": "pass", "fail": "FAIL", "timeout": "TIME", "skip": "-"}


def _metrics(metrics: dict[str, float]) -> str:
    keys = sorted(k for k in metrics if k != "global_step")
    shown = ", ".join(f"{k}={metrics[k]:.3g}" for k in keys[:4])
    if "global_step" in metrics:
        shown += f" @{int(metrics['global_step'])}"
    return shown


def render(rows: list[tuple[Recipe, dict[str, Outcome], int | None]]) -> str:
    lines = [
        "| program | exercises | 2.15 edited | here edited | here unmodified | check | "
        "metrics 2.15 | metrics here (edited) | first error here |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for recipe, outcomes, check in rows:
        ref, edited, raw = (
            outcomes.get(c, Outcome("skip")) for c in ("2.15", "edited", "unmodified")
        )
        error = raw.error if raw.status != "pass" else ""
        if edited.status != "pass":
            error = edited.error
        if ref.status != "pass":
            error = (error + " (2.15: " + ref.error + ")") if error else "2.15: " + ref.error
        check_text = "-" if check is None else f"exit {check}"
        lines.append(
            f"| {recipe.name} | {recipe.kind} | {MARK[ref.status]} | {MARK[edited.status]} | "
            f"{MARK[raw.status]} | {check_text} | {_metrics(ref.metrics)} | "
            f"{_metrics(edited.metrics)} | {error.replace('|', '/')[:160]} |"
        )
    return "\n".join(lines)


def summary(rows: list[tuple[Recipe, dict[str, Outcome], int | None]]) -> str:
    runs_215 = [(r, o, c) for r, o, c in rows if o.get("2.15", Outcome("skip")).status == "pass"]
    n = len(runs_215)
    edited = sum(o["edited"].status == "pass" for _, o, _ in runs_215 if "edited" in o)
    # No metrics logged on 2.15 is nothing to compare with: not counted as comparable.
    comparable = sum(
        o["edited"].status == "pass" and metrics_comparable(o["2.15"].metrics, o["edited"].metrics)
        for _, o, _ in runs_215
        if "edited" in o
    )
    unmeasured = sum(not o["2.15"].metrics for _, o, _ in runs_215)
    raw = sum(o.get("unmodified", Outcome("skip")).status == "pass" for _, o, _ in runs_215)
    here_any = sum(o.get("unmodified", Outcome("skip")).status == "pass" for _, o, _ in rows)
    checked = [(o, c) for _, o, c in rows if c is not None and "unmodified" in o]
    honest = sum((c == 0) == (o["unmodified"].status == "pass") for o, c in checked)

    def pct(a: int, b: int) -> str:
        return f"{a}/{b} ({100 * a / b:.0f}%)" if b else f"{a}/0"

    return "\n".join(
        [
            f"- programs: {len(rows)}; run on tf.estimator 2.15 with the recipe's edits: {n}",
            f"- of those, run here with the same edits: {pct(edited, n)}; with comparable "
            f"metrics (same keys, loose band): {pct(comparable, n)}"
            + (f" ({unmeasured} logged no metrics on 2.15)" if unmeasured else ""),
            f"- of those, run here with no edit to their code: {pct(raw, n)}",
            f"- run here unmodified, of all programs: {pct(here_any, len(rows))}",
            f"- `check` exit 0 exactly when `run` runs the unmodified program: "
            f"{pct(honest, len(checked))}",
        ]
    )
