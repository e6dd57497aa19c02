"""Command line: `python -m keras_estimator demo | run SCRIPT.py [ARGS] | run -m MODULE |
check PATH... [--format json]`."""

from __future__ import annotations

import argparse
import logging
import sys


def _run(argv: list[str]) -> int:
    """`run` takes everything after the script as the script's own arguments
    (`cli/run_command.py`: options, --help, the TF1 / TF2 choice)."""
    from keras_estimator.cli.run_command import run_command

    return run_command(argv)


def _check(paths: list[str], output_format: str, max_size_mb: float) -> int:
    from keras_estimator.migration import exit_status, format_json, format_text, scan

    try:
        reports = scan(paths, max_size=int(max_size_mb * 1_000_000))
    except FileNotFoundError as exc:
        sys.stderr.write(f"keras-estimator check: {exc}\n")
        return 2
    sys.stdout.write((format_json if output_format == "json" else format_text)(reports) + "\n")
    return exit_status(reports)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "run":
        return _run(argv[1:])
    parser = argparse.ArgumentParser(prog="keras-estimator", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="train, evaluate and predict on the bundled digits data")
    demo.add_argument(
        "--model-dir", default=None, help="where checkpoints go (default: a temp dir)"
    )
    demo.add_argument("--steps", type=int, default=2000, help="training steps (default 2000)")
    demo.add_argument("--verbose", action="store_true", help="show the INFO log lines")
    sub.add_parser("run", help="run a legacy tf.estimator script: run SCRIPT.py [ARGS...]")
    check = sub.add_parser(
        "check", help="report which estimator / TF1 / tf.contrib APIs in PATHs are supported"
    )
    check.add_argument("paths", nargs="+", help="Python files, notebooks or directories")
    check.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="text (default) or json (schema in the README)",
    )
    check.add_argument(
        "--max-size",
        type=float,
        default=2.0,
        metavar="MB",
        help="skip Python files bigger than this, and notebooks with more code (default 2 MB)",
    )
    args = parser.parse_args(argv)
    if args.command == "check":
        return _check(args.paths, args.format, args.max_size)

    from keras_estimator.cli.quiet_tensorflow import import_tensorflow_quietly

    import_tensorflow_quietly()  # TF_CPP_MIN_LOG_LEVEL=2 unless set; before TensorFlow loads
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING, format="%(levelname)s %(message)s"
    )
    from keras_estimator.utils.log import print_each_record_once

    print_each_record_once()  # the root handler above prints our lines; TensorFlow's not again
    if args.command == "demo":
        from keras_estimator.demo import format_report, run_demo

        report = run_demo(model_dir=args.model_dir, steps=args.steps)
        sys.stdout.write(format_report(report) + "\n")
        return 0
    return 2
