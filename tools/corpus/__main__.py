"""`python -m tools.corpus checkout|run|list` (run from the project root). See README.md."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from tools.corpus import checkout, library_tests, runner, table
from tools.corpus.recipes import RECIPES


def _selected(names: list[str]) -> list:
    if not names:
        return RECIPES
    chosen = [r for r in RECIPES if any(n in r.name for n in names)]
    if not chosen:
        raise SystemExit(f"No recipe matches {names}; `python -m tools.corpus list` lists them.")
    return chosen


def _checkout(args: argparse.Namespace) -> None:
    by_repo: dict[tuple[str, str], set[str]] = {}
    for recipe in _selected(args.only):
        by_repo.setdefault((recipe.repo, recipe.commit), set()).add(recipe.folder)
    # The peer suites' test files (library_tests.py), from the same checkouts.
    for suite in library_tests.SUITES:
        if (suite.repo, suite.commit) in by_repo:
            folders = {str(Path(name).parent) for name in suite.files + suite.support}
            by_repo[(suite.repo, suite.commit)].update(folders)
    for (repo, commit), folders in by_repo.items():
        target = checkout.checkout_dir(args.checkouts, repo)
        git_dir = checkout.find_git_dir(args.mirror_root, repo) if args.mirror_root else None
        if git_dir is None:
            checkout.clone(repo, commit, target)
            print(f"{repo}: cloned at {commit[:10]}")
        else:
            count = checkout.extract(git_dir, commit, sorted(folders), target)
            print(f"{repo}: {count} files at {commit[:10]} from {git_dir}")
    for recipe in _selected(args.only):
        packages = runner.install_pip(recipe, args.checkouts, args.python)
        if packages is not None:
            print(f"{recipe.name}: {', '.join(recipe.pip)} in {packages}")


def _run(args: argparse.Namespace) -> int:
    pythons = runner.Pythons(reference=args.reference_python, here=args.python)
    cases = [c for c in runner.CASES if c in args.cases.split(",")]
    rows = []
    results = {}
    for recipe in _selected(args.only):
        outcomes = {}
        for case in cases:
            if case == "2.15" and not Path(args.reference_python).exists():
                continue
            # Without edits the edited and unmodified cases run the same code: run it once.
            twin = {"edited": "unmodified", "unmodified": "edited"}.get(case, "")
            if not recipe.edits and twin in outcomes:
                outcomes[case] = outcomes[twin]
                continue
            outcomes[case] = runner.run_case(
                recipe, case, args.checkouts, args.work, pythons, args.timeout
            )
            runner.save(outcomes[case], args.work / recipe.name / f"{case}.json")
            print(
                f"{recipe.name:40s} {case:11s} {outcomes[case].status:8s} "
                f"{outcomes[case].seconds:6.1f}s {outcomes[case].error[:100]}",
                file=sys.stderr,
                flush=True,
            )
        check = runner.run_check(recipe, args.checkouts, args.work, pythons) if args.check else None
        if check is not None:
            (args.work / recipe.name / "check.exit").write_text(str(check))
        rows.append((recipe, outcomes, check))
        results[recipe.name] = {
            "check": check,
            **{
                c: {
                    "status": o.status,
                    "seconds": round(o.seconds, 1),
                    "metrics": o.metrics,
                    "error": o.error,
                }
                for c, o in outcomes.items()
            },
        }
    text = table.render(rows) + "\n\n" + table.summary(rows)
    print(text)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0


def _table(args: argparse.Namespace) -> int:
    """The table from the outcomes earlier runs saved under --work (no program is run)."""
    rows = []
    for recipe in _selected(args.only):
        folder = args.work / recipe.name
        outcomes = {}
        for case in runner.CASES:
            outcome = runner.load(folder / f"{case}.json")
            if outcome is None and case == "edited" and not recipe.edits:
                outcome = runner.load(folder / "unmodified.json")
            if outcome is None and case == "unmodified" and not recipe.edits:
                outcome = outcomes.get("edited")
            log_file = folder / case / "corpus.log"
            exit_0 = outcome is not None and (
                outcome.status == "pass" or outcome.error.startswith("exit 0 after")
            )
            if exit_0 and log_file.exists():
                # Outcomes saved before exit-0-after-a-traceback counted as a failure.
                outcome = runner.classify(0, log_file.read_text(), outcome.seconds)
            if outcome is not None and log_file.exists():
                outcome.metrics = runner.parse_metrics(log_file.read_text())
            if outcome is not None:
                outcomes[case] = outcome
        if not outcomes:
            continue
        check_file = folder / "check.exit"
        check = int(check_file.read_text()) if check_file.exists() else None
        rows.append((recipe, outcomes, check))
    print(table.render(rows) + "\n\n" + table.summary(rows))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.corpus")
    sub = parser.add_subparsers(dest="command", required=True)
    co = sub.add_parser("checkout", help="materialise the repositories the recipes name")
    co.add_argument("--checkouts", type=Path, default=Path("/tmp/corpus"))
    co.add_argument(
        "--mirror-root",
        type=Path,
        default=None,
        help="folder of git mirrors <owner>+<name>/repo (else git clone)",
    )
    co.add_argument(
        "--python",
        default=sys.executable,
        help="whose pip installs the recipes' `pip` packages (--no-deps --target)",
    )
    co.add_argument("only", nargs="*")
    rn = sub.add_parser("run", help="run the recipes and print the table")
    rn.add_argument("--checkouts", type=Path, default=Path("/tmp/corpus"))
    rn.add_argument("--work", type=Path, default=Path("/tmp/corpus-work"))
    rn.add_argument("--reference-python", default="/tmp/venv215/bin/python")
    rn.add_argument("--python", default=sys.executable)
    rn.add_argument("--cases", default=",".join(runner.CASES))
    rn.add_argument("--timeout", type=int, default=None, help="seconds per run")
    rn.add_argument("--no-check", dest="check", action="store_false")
    rn.add_argument("--json", type=Path, default=None)
    rn.add_argument("only", nargs="*")
    tb = sub.add_parser("table", help="print the table from the outcomes saved under --work")
    tb.add_argument("--work", type=Path, default=Path("/tmp/corpus-work"))
    tb.add_argument("only", nargs="*")
    sub.add_parser("list", help="list the recipes")
    args = parser.parse_args(argv)
    if args.command == "checkout":
        _checkout(args)
        return 0
    if args.command == "list":
        for recipe in RECIPES:
            print(f"{recipe.name:40s} {recipe.repo}:{recipe.folder}/{recipe.entry_file}")
        return 0
    if args.command == "table":
        return _table(args)
    return _run(args)


if __name__ == "__main__":
    sys.exit(main())
