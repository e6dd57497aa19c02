"""Runs one recipe's cases in fresh work directories and reads the outcome from the logs.

Cases: `2.15` (tensorflow-estimator 2.15 venv, recipe edits), `edited` (keras_estimator
through `keras-estimator run`, the same edits) and `unmodified` (keras_estimator, the
program's own code; data and arguments as for the others). `check` is
`keras-estimator check` on the unmodified entry file. A recipe's `pip` packages are installed
once into a side folder under the checkouts folder and put on both sides' `PYTHONPATH`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

from tools.corpus.recipe import Recipe

SITE_DIR = Path(__file__).resolve().parent / "site"
PROJECT_DIR = Path(__file__).resolve().parents[2]
CASES = ("2.15", "edited", "unmodified")


@dataclasses.dataclass
class Outcome:
    status: str  # pass / fail / timeout / skip
    seconds: float = 0.0
    metrics: dict[str, float] = dataclasses.field(default_factory=dict)
    error: str = ""
    log: str = ""


@dataclasses.dataclass
class Pythons:
    reference: str  # the tensorflow-estimator 2.15 venv's python
    here: str  # python with keras_estimator importable


def notebook_to_script(notebook: Path) -> Path:
    """The notebook's code cells as one script (IPython magics and shell lines dropped)."""
    cells = json.loads(notebook.read_text())["cells"]
    lines = []
    for cell in cells:
        if cell.get("cell_type") != "code":
            continue
        source = "".join(cell.get("source", []))
        for line in source.splitlines():
            stripped = line.lstrip()
            if stripped.startswith(("%", "!")):
                line = line[: len(line) - len(stripped)] + "pass  # " + stripped
            lines.append(line)
        lines.append("")
    script = notebook.parent / _script_path(notebook.name)
    script.write_text("\n".join(lines))
    return script


def _script_path(name: str) -> str:
    """A notebook's script: `<stem>_notebook.py`, which no package's name shadows
    (`keras.ipynb` as `keras.py` would hide the keras package from its own imports)."""
    return name[: -len(".ipynb")] + "_notebook.py" if name.endswith(".ipynb") else name


def prepare(recipe: Recipe, checkouts: Path, work: Path, edited: bool) -> None:
    """A fresh copy of the recipe's folder with its data, and its edits when `edited`."""
    source = checkouts / recipe.repo.replace("/", "+") / recipe.folder
    if not source.is_dir():
        raise FileNotFoundError(
            f"No checkout of {recipe.repo} folder {recipe.folder!r} under {checkouts}; "
            f"expected {source}. Run `python -m tools.corpus checkout` first. "
            f"Received: checkouts={checkouts}"
        )
    if work.exists():
        shutil.rmtree(work)
    shutil.copytree(source, work, symlinks=True)
    if recipe.entry.endswith(".ipynb"):
        notebook_to_script(work / recipe.entry)
    if recipe.data is not None:
        recipe.data(work)
    for edit in recipe.variant + (recipe.edits if edited else ()):
        path = work / _script_path(edit.file)
        text = path.read_text()
        if edit.old not in text:
            raise ValueError(
                f"Recipe {recipe.name}: the text to replace is not in {edit.file}; the "
                f"checkout is not at the recipe's commit, or the edit is stale. "
                f"Received: old={edit.old[:80]!r}"
            )
        path.write_text(text.replace(edit.old, edit.new))


def pip_dir(recipe: Recipe, checkouts: Path) -> Path | None:
    """Where the recipe's `pip` packages are installed: `<checkouts>/pip/<key>/site-packages`,
    one folder per set of packages (named site-packages, which `keras-estimator run` takes
    for installed code, never for the script's own modules). None without packages."""
    if not recipe.pip:
        return None
    key = hashlib.sha256("\n".join(sorted(recipe.pip)).encode()).hexdigest()[:12]
    return checkouts.resolve() / "pip" / key / "site-packages"


def install_pip(recipe: Recipe, checkouts: Path, python: str) -> Path | None:
    """Installs the recipe's `pip` packages (once; `pip install --no-deps --target`, with
    `python`'s pip) and returns their folder, or None without packages."""
    target = pip_dir(recipe, checkouts)
    if target is None:
        return None
    marker = target.parent / "installed.txt"
    wanted = "\n".join(sorted(recipe.pip)) + "\n"
    if target.is_dir() and marker.exists() and marker.read_text() == wanted:
        return target
    partial = target.parent / "partial"
    if partial.exists():
        shutil.rmtree(partial)
    partial.parent.mkdir(parents=True, exist_ok=True)
    command = [python, "-m", "pip", "install", "--no-deps", "--no-input", "--quiet"]
    command += ["--disable-pip-version-check", "--target", str(partial), *recipe.pip]
    done = subprocess.run(command, capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        raise RuntimeError(
            f"Recipe {recipe.name}: pip could not install {list(recipe.pip)} into {partial} "
            f"(exit {done.returncode}). Received: {done.stderr.strip()[-400:]}"
        )
    if target.exists():
        shutil.rmtree(target)
    partial.rename(target)
    marker.write_text(wanted)
    return target


def _command(recipe: Recipe, python: str, through_run: bool, work: Path) -> list[str]:
    entry = _script_path(recipe.entry)
    target = entry.split() if entry.startswith("-m ") else [entry]
    args = [a.replace("{work}", str(work)) for a in recipe.args]
    if through_run:
        return [python, "-m", "keras_estimator", "run", *target, *args]
    return [python, *target, *args]


def _environment(
    recipe: Recipe, work: Path, here: bool, packages: Path | None = None
) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "TF_USE_LEGACY_KERAS")}
    paths = [str(SITE_DIR)] + [str(work / p) for p in recipe.pythonpath]
    if packages is not None:
        paths.append(str(packages))
    if here:
        paths.insert(0, str(PROJECT_DIR))
    env.update(
        PYTHONPATH=os.pathsep.join(paths),
        TF_CPP_MIN_LOG_LEVEL="2",
        CUDA_VISIBLE_DEVICES="",
        PYTHONUNBUFFERED="1",
        MPLBACKEND="Agg",
        HOME=str(work / ".home"),
    )
    return env


_LOGGING_ERROR = re.compile(r"--- Logging error ---\n.*?\nArguments: [^\n]*\n", re.DOTALL)
_EVAL_LINE = re.compile(r"Saving dict for global step (\d+): (.*)")
_FINAL_LOSS_LINE = re.compile(r"Loss for final step: ([-\d.eE+naif]+)")
_SAVE_LINE = re.compile(r"Saving checkpoints for (\d+) into")
_ERROR_LINE = re.compile(r"^([A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt)\b.*)$")


def parse_metrics(log: str) -> dict[str, float]:
    """The last evaluation dict tf.estimator logged, else the last training loss line."""
    found = _EVAL_LINE.findall(log)
    metrics: dict[str, float] = {}
    if found:
        step, body = found[-1]
        for item in body.split(", "):
            key, _, value = item.partition(" = ")
            try:
                metrics[key.strip()] = float(value)
            except ValueError:
                continue
        metrics["global_step"] = float(step)
        return metrics
    losses = _FINAL_LOSS_LINE.findall(log)
    if losses:
        try:
            metrics["train_loss"] = float(losses[-1].rstrip("."))
        except ValueError:
            pass
        saves = _SAVE_LINE.findall(log)
        if saves:
            metrics["global_step"] = float(saves[-1])
    return metrics


def first_error(log: str) -> str:
    """The exception line of the (last) traceback, else the last non-empty line."""
    lines = log.splitlines()
    for i in range(len(lines) - 1, -1, -1):
        if lines[i].startswith("Traceback (most recent call last)"):
            for line in lines[i + 1 :]:
                if _ERROR_LINE.match(line):
                    return line.strip()[:300]
    for line in reversed(lines):
        if _ERROR_LINE.match(line):
            return line.strip()[:300]
    return next((line.strip()[:300] for line in reversed(lines) if line.strip()), "")


def save(outcome: Outcome, path: Path) -> None:
    """The outcome without its log, beside the case's work directory."""
    fields = dataclasses.asdict(outcome)
    fields.pop("log")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(fields, indent=1))


def load(path: Path) -> Outcome | None:
    if not path.exists():
        return None
    return Outcome(**json.loads(path.read_text()))


def run_case(
    recipe: Recipe,
    case: str,
    checkouts: Path,
    work_root: Path,
    pythons: Pythons,
    timeout: int | None = None,
) -> Outcome:
    work = work_root / recipe.name / case
    here = case != "2.15"
    try:
        prepare(recipe, checkouts, work, edited=case != "unmodified")
        packages = install_pip(recipe, checkouts, pythons.here)
    except (OSError, ValueError, RuntimeError, subprocess.TimeoutExpired) as error:
        return Outcome("fail", error=f"prepare: {error}"[:300])
    (work / ".home").mkdir(exist_ok=True)
    python = pythons.here if here else pythons.reference
    command = _command(recipe, python, through_run=here, work=work)
    started = time.monotonic()
    try:
        done = subprocess.run(
            command,
            cwd=work,
            env=_environment(recipe, work, here, packages),
            capture_output=True,
            text=True,
            timeout=timeout or recipe.timeout,
            errors="replace",
        )
    except subprocess.TimeoutExpired as expired:
        log = (expired.stdout or "") + (expired.stderr or "")
        if isinstance(log, bytes):
            log = log.decode(errors="replace")
        (work / "corpus.log").write_text(" ".join(command) + "\n" + log)
        return Outcome(
            "timeout",
            time.monotonic() - started,
            parse_metrics(log),
            f"timeout after {timeout or recipe.timeout}s",
            log,
        )
    seconds = time.monotonic() - started
    log = done.stdout + "\n" + done.stderr
    (work / "corpus.log").write_text(" ".join(command) + "\n" + log)
    return classify(done.returncode, log, seconds)


def classify(returncode: int, log: str, seconds: float = 0.0) -> Outcome:
    """Pass only on exit 0 with no traceback in the log: several programs catch their own
    exceptions (`traceback.print_exc()`) and exit 0."""
    # logging's own "--- Logging error ---" report (a bad format string) is not a failure.
    log = _LOGGING_ERROR.sub("", log)
    if returncode == 0 and "Traceback (most recent call last)" not in log:
        return Outcome("pass", seconds, parse_metrics(log), "", log)
    if returncode == 0:
        return Outcome("fail", seconds, parse_metrics(log), "exit 0 after " + first_error(log), log)
    return Outcome(
        "fail",
        seconds,
        parse_metrics(log),
        first_error(log) or f"exit status {returncode}",
        log,
    )


def run_check(recipe: Recipe, checkouts: Path, work_root: Path, pythons: Pythons) -> int:
    """`keras-estimator check` on the unmodified entry file; its exit status."""
    work = work_root / recipe.name / "check"
    prepare(recipe, checkouts, work, edited=False)
    packages = install_pip(recipe, checkouts, pythons.here)
    done = subprocess.run(
        [pythons.here, "-m", "keras_estimator", "check", _script_path(recipe.entry_file)],
        cwd=work,
        env=_environment(recipe, work, True, packages),
        capture_output=True,
        text=True,
        timeout=300,
    )
    (work / "check.log").write_text(done.stdout + "\n" + done.stderr)
    return done.returncode


def metrics_comparable(reference: dict[str, float], here: dict[str, float]) -> bool:
    """Same metric names, and each value within a loose band of the reference (tiny random
    data and a few steps: the runs are not seeded alike, so only gross gaps count)."""
    if not reference or not here:
        return False
    if set(reference) != set(here):
        return False
    for key, value in reference.items():
        other = here[key]
        if key == "global_step":
            if other != value:
                return False
            continue
        if other != other:  # NaN
            return False
        if abs(other - value) > 0.5 * max(abs(value), abs(other), 1.0):
            return False
    return True
