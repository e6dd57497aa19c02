"""Peer suites: a library's own estimator tests, run with pytest on the 2.15 venv and here.

A `Suite` names test files of a library's repository at its release's commit (from the
checkouts `python -m tools.corpus checkout` makes: the library recipes' repositories), the
library's packages (installed as the recipes' `pip` ones: unmodified, `--no-deps`, in a side
folder on `PYTHONPATH`), pytest arguments (`-k` to keep the estimator tests) and edits of
ours applied on both sides (DeepCTR gates its estimator tests on the TensorFlow version).
Each side runs in a fresh copy of the files: 2.15 as `python -m pytest`, here as
`python -m keras_estimator run -m pytest` (`keras_estimator.install()` first, as a user
runs a program). Counts come from pytest's JUnit XML report.

    python -m tools.corpus.library_tests --checkouts /tmp/libcorpus/checkouts \\
        --work /tmp/libcorpus/suites [SUITE ...]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ElementTree
from pathlib import Path

from tools.corpus import runner
from tools.corpus.datagen import TRACKING_ALIAS
from tools.corpus.recipe import Edit, Recipe
from tools.corpus.recipes_libraries import (
    ADANET,
    ADANET_PIP,
    DEEPCTR,
    DEEPCTR_PIP,
    RANKING,
    RANKING_PIP,
)

SIDES = ("2.15", "here")


@dataclasses.dataclass(frozen=True)
class Suite:
    """Test files of a library's repository (paths from its root), run with pytest.

    `support` files are copied beside them (a test package's `__init__.py`, its helpers);
    `edits` apply to the copies on both sides, and `conftest` (code of ours) is added to the
    conftest.py every copy gets.
    """

    name: str
    repo: str
    commit: str
    files: tuple[str, ...]
    pip: tuple[str, ...]
    support: tuple[str, ...] = ()
    pytest_args: tuple[str, ...] = ()
    edits: tuple[Edit, ...] = ()
    conftest: str = ""
    timeout: int = 1500
    note: str = ""

    def as_recipe(self) -> Recipe:
        """The recipe-shaped view the corpus runner's pip and environment helpers take."""
        return Recipe(self.name, self.repo, self.commit, ".", "", "", pip=self.pip)


@dataclasses.dataclass
class Counts:
    status: str  # ran / error (pytest did not report) / timeout
    tests: int = 0
    passed: int = 0
    failed: int = 0
    errors: int = 0
    skipped: int = 0
    seconds: float = 0.0
    failures: dict[str, str] = dataclasses.field(default_factory=dict)  # test id: first line
    error: str = ""


_RANKING_TESTS = "tensorflow_ranking/python/"
DEEPCTR_ESTIMATOR_MODELS = (
    "AFM", "AutoInt", "CCPM", "DCN", "DeepFEFM", "DeepFM", "FNN", "FiBiNET", "FwFM", "NFM",
    "PNN", "WDL", "xDeepFM",
)  # fmt: skip
ADANET_CORE_TESTS = ("estimator_test.py", "estimator_v2_test.py", "tpu_estimator_test.py")
# The tests import adanet.core.testing_utils, which the wheel lacks: the repository's copy
# sits beside them (adanet/core/ of the work copy, pytest's base folder for those files,
# which have no __init__.py there) and they import it by its own name.
_ADANET_TESTING_UTILS = tuple(
    Edit(
        f"adanet/core/{name}",
        "from adanet.core import testing_utils as tu",
        "import testing_utils as tu  # corpus: the repository's, beside the test",
    )
    for name in ADANET_CORE_TESTS
)

# numpy's `float` alias, gone in NumPy 1.24 (both venvs' numpy).
NUMPY_FLOAT_ALIAS = """
import numpy

if not hasattr(numpy, "float"):
    numpy.float = float
"""

SUITES: list[Suite] = [
    Suite(
        name="tfr-estimator",
        repo=RANKING[0],
        commit=RANKING[1],
        files=tuple(
            _RANKING_TESTS + f
            for f in ("estimator_test.py", "model_test.py", "head_test.py", "feature_test.py")
        ),
        pip=RANKING_PIP,
        note="tfr.estimator (canned DNN / GAM ranking estimators), tfr.model's ranking "
        "model_fn, tfr.head, tfr.feature (feature columns)",
    ),
    Suite(
        name="tfr-keras-estimator",
        repo=RANKING[0],
        commit=RANKING[1],
        files=(_RANKING_TESTS + "keras/estimator_test.py",),
        pip=RANKING_PIP,
        note="tfr.keras.estimator: a ranking Keras model turned into an Estimator",
    ),
    Suite(
        name="deepctr-estimator",
        repo=DEEPCTR[0],
        commit=DEEPCTR[1],
        files=tuple(f"tests/models/{m}_test.py" for m in DEEPCTR_ESTIMATOR_MODELS),
        support=("tests/__init__.py", "tests/models/__init__.py", "tests/utils.py"),
        pip=DEEPCTR_PIP,
        pytest_args=("-k", "Estimator"),
        edits=(
            # DeepCTR runs its estimator tests only on TF < 2.0 or 2.2 <= TF < 2.6; on
            # either side here they would return at once and count as passed.
            Edit(
                "tests/utils.py",
                "TEST_Estimator = test_estimator_version(tf.__version__)",
                "TEST_Estimator = True",
            ),
        ),
        note="deepctr.estimator's thirteen models (test_<Model>Estimator), estimator "
        "tests forced on: DeepCTR gates them on TF < 2.6",
    ),
    Suite(
        name="adanet-estimator",
        repo=ADANET[0],
        commit=ADANET[1],
        files=(
            *(f"adanet/core/{name}" for name in ADANET_CORE_TESTS),
            "adanet/examples/simple_dnn_test.py",
        ),
        support=("adanet/core/testing_utils.py",),
        pip=ADANET_PIP,
        edits=(
            *_ADANET_TESTING_UTILS,
            # AdanetTestCase.setUp parses absl's flags from sys.argv, which under pytest
            # holds pytest's own options: the program name only.
            Edit(
                "adanet/core/testing_utils.py",
                "flags.FLAGS(sys.argv)",
                "flags.FLAGS(sys.argv[:1])",
            ),
        ),
        # What 2.15 needs too: the alias of the module TF 2.11 moved (the recipes' edit),
        # and numpy's `float` alias (gone in NumPy 1.24), which report_accessor.py:58 uses.
        conftest=TRACKING_ALIAS + NUMPY_FLOAT_ALIAS,
        timeout=5400,
        note="adanet.Estimator (core/estimator_test.py, estimator_v2_test.py), "
        "adanet.TPUEstimator off TPU (tpu_estimator_test.py), examples/simple_dnn",
    ),
]


def prepare(suite: Suite, checkouts: Path, work: Path) -> None:
    """A fresh copy of the suite's files (and support files) with its edits."""
    source = checkouts / suite.repo.replace("/", "+")
    if work.exists():
        shutil.rmtree(work)
    for name in suite.files + suite.support:
        if not (source / name).is_file():
            raise FileNotFoundError(
                f"Suite {suite.name}: no {name} under {source}; run `python -m tools.corpus "
                f"checkout` for the library recipes first. Received: checkouts={checkouts}"
            )
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source / name, work / name)
    (work / "conftest.py").write_text(CONFTEST + suite.conftest)
    for edit in suite.edits:
        path = work / edit.file
        text = path.read_text()
        if edit.old not in text:
            raise ValueError(
                f"Suite {suite.name}: the text to replace is not in {edit.file}. "
                f"Received: old={edit.old[:80]!r}"
            )
        path.write_text(text.replace(edit.old, edit.new))


# Written into each copy: the test files are absl / tf.test ones, meant for `python
# file_test.py` (which parses absl's flags); under pytest nothing parses them, and
# tf.test.TestCase.get_temp_dir() reads --test_tmpdir.
CONFTEST = """from absl import flags

flags.FLAGS.mark_as_parsed()
"""


def read_junit(path: Path) -> Counts:
    """Counts (and each failure's first message line) from pytest's JUnit XML."""
    counts = Counts("ran")
    for case in ElementTree.parse(path).getroot().iter("testcase"):
        counts.tests += 1
        test_id = f"{case.get('classname', '')}::{case.get('name', '')}"
        outcome = next(iter(case), None)
        tag = outcome.tag if outcome is not None else ""
        if tag == "skipped":
            counts.skipped += 1
        elif tag in ("failure", "error"):
            if tag == "failure":
                counts.failed += 1
            else:
                counts.errors += 1
            message = (outcome.get("message") or outcome.text or "").strip()
            counts.failures[test_id] = message.splitlines()[0][:300] if message else tag
        else:
            counts.passed += 1
    return counts


def run_side(
    suite: Suite, side: str, checkouts: Path, work_root: Path, pythons: runner.Pythons
) -> Counts:
    work = work_root / suite.name / side
    try:
        prepare(suite, checkouts, work)
        packages = runner.install_pip(suite.as_recipe(), checkouts, pythons.here)
    except (OSError, ValueError, RuntimeError) as error:
        return Counts("error", error=f"prepare: {error}"[:300])
    (work / ".home").mkdir(exist_ok=True)
    report = work / "junit.xml"
    pytest = ["-m", "pytest", "-p", "no:cacheprovider", "-q", f"--junitxml={report}"]
    pytest += ["--rootdir", str(work), *suite.pytest_args, *suite.files]
    if side == "here":
        command = [pythons.here, "-m", "keras_estimator", "run", *pytest]
    else:
        command = [pythons.reference, *pytest]
    env = runner._environment(suite.as_recipe(), work, side == "here", packages)
    started = time.monotonic()
    try:
        done = subprocess.run(
            command,
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=suite.timeout,
            errors="replace",
        )
        log = done.stdout + "\n" + done.stderr
    except subprocess.TimeoutExpired as expired:
        log = str(expired.stdout or "") + str(expired.stderr or "")
        (work / "pytest.log").write_text(" ".join(command) + "\n" + log)
        return Counts("timeout", seconds=time.monotonic() - started, error="timeout")
    (work / "pytest.log").write_text(" ".join(command) + "\n" + log)
    seconds = time.monotonic() - started
    if not report.exists():
        return Counts("error", seconds=seconds, error=runner.first_error(log))
    counts = read_junit(report)
    counts.seconds = seconds
    return counts


def render(results: dict[str, dict[str, Counts]]) -> str:
    lines = [
        "| suite | side | tests | passed | failed | errors | skipped | seconds |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, sides in results.items():
        for side, c in sides.items():
            if c.status != "ran":
                lines.append(f"| {name} | {side} | {c.status}: {c.error[:120]} | | | | | |")
                continue
            lines.append(
                f"| {name} | {side} | {c.tests} | {c.passed} | {c.failed} | {c.errors} | "
                f"{c.skipped} | {c.seconds:.0f} |"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.corpus.library_tests")
    parser.add_argument("--checkouts", type=Path, default=Path("/tmp/corpus"))
    parser.add_argument("--work", type=Path, default=Path("/tmp/corpus-suites"))
    parser.add_argument("--reference-python", default="/tmp/venv215/bin/python")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--sides", default=",".join(SIDES))
    parser.add_argument("--list", action="store_true", help="list the suites")
    parser.add_argument("only", nargs="*", help="suites whose name contains one of these")
    args = parser.parse_args(argv)
    if args.list:
        for suite in SUITES:
            print(f"{suite.name:24s} {suite.repo}: {len(suite.files)} files  {suite.note}")
        return 0
    chosen = [s for s in SUITES if not args.only or any(n in s.name for n in args.only)]
    pythons = runner.Pythons(reference=args.reference_python, here=args.python)
    results: dict[str, dict[str, Counts]] = {}
    for suite in chosen:
        results[suite.name] = {}
        for side in (s for s in SIDES if s in args.sides.split(",")):
            counts = run_side(suite, side, args.checkouts, args.work, pythons)
            results[suite.name][side] = counts
            print(
                f"{suite.name:24s} {side:5s} {counts.status:7s} passed {counts.passed}/"
                f"{counts.tests} failed {counts.failed} errors {counts.errors} "
                f"({counts.seconds:.0f}s) {counts.error[:100]}",
                file=sys.stderr,
                flush=True,
            )
            (args.work / suite.name).mkdir(parents=True, exist_ok=True)
            (args.work / suite.name / f"{side}.json").write_text(
                json.dumps(dataclasses.asdict(counts), indent=1)
            )
    print(render(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
