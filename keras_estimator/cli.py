"""Command line: `python -m keras_estimator demo` (more commands arrive with drop-in mode)."""

from __future__ import annotations

import argparse
import logging
import os
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="keras-estimator", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="train, evaluate and predict on the bundled digits data")
    demo.add_argument(
        "--model-dir", default=None, help="where checkpoints go (default: a temp dir)"
    )
    demo.add_argument("--steps", type=int, default=2000, help="training steps (default 2000)")
    demo.add_argument("--verbose", action="store_true", help="show the INFO log lines")
    args = parser.parse_args(argv)

    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING, format="%(levelname)s %(message)s"
    )
    if args.command == "demo":
        from keras_estimator.demo import format_report, run_demo

        report = run_demo(model_dir=args.model_dir, steps=args.steps)
        sys.stdout.write(format_report(report) + "\n")
        return 0
    return 2
