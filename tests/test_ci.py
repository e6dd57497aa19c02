"""CI runs what the README tells a user to run: its install and test commands, verbatim."""

import os
import re

from helpers import ROOT


def readme_test_commands():
    """The commands of the README's "Install and run the tests" block, split at `&&`."""
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as readme:
        text = readme.read()
    block = re.search(r"Install and run the tests.*?```bash\n(.*?)\n```", text, re.S)
    assert block, "README.md lost its 'Install and run the tests' block"
    return [command.strip() for command in block.group(1).split("&&")]


def test_ci_runs_the_readme_install_and_test_commands_in_a_fresh_venv():
    with open(os.path.join(ROOT, ".ci", "run"), encoding="utf-8") as script:
        lines = [line.strip() for line in script if not line.strip().startswith("#")]
    install, test = readme_test_commands()
    assert install == 'python -m pip install -q -e ".[test]"'
    assert test == "python -m pytest -q"
    assert install in lines
    # pytest gets .ci/run's own arguments (none in CI); its status is kept for the exit.
    assert f'{test} "$@" || status=$?' in lines
    venv = lines.index('"${PYTHON:-python3}" -m venv "$venv"')
    activate = next(i for i, line in enumerate(lines) if line.startswith('source "$venv/'))
    assert venv < activate < lines.index(install) < lines.index(f'{test} "$@" || status=$?')
    assert os.access(os.path.join(ROOT, ".ci", "run"), os.X_OK)


def test_ci_lints_and_type_checks_before_the_tests():
    """ruff (lint, format) and mypy run in the venv after the install, before pytest: under
    `set -e`, any of them failing fails CI."""
    with open(os.path.join(ROOT, ".ci", "run"), encoding="utf-8") as script:
        lines = [line.strip() for line in script if not line.strip().startswith("#")]
    assert "set -euo pipefail" in lines
    checks = [
        "ruff check keras_estimator tests benchmarks",
        "ruff format --check keras_estimator tests benchmarks",
        "mypy",  # pyproject.toml's [tool.mypy] names what it checks
    ]
    install, test = readme_test_commands()
    order = [lines.index(install), *(lines.index(c) for c in checks)]
    assert order == sorted(order) and order[-1] < lines.index(f'{test} "$@" || status=$?')


def test_the_type_checker_is_installed_by_the_test_extra_and_checks_the_package():
    # Read as text: tomllib is Python 3.11+, and the package supports 3.10.
    with open(os.path.join(ROOT, "pyproject.toml"), encoding="utf-8") as f:
        pyproject = f.read()
    test_extra = re.search(r"^test = \[(.*?)\]", pyproject, re.S | re.M)
    assert test_extra and re.search(r'"mypy\b', test_extra.group(1))
    mypy_section = re.search(r"^\[tool\.mypy\]\n(.*?)^\[", pyproject, re.S | re.M)
    assert mypy_section and 'files = ["keras_estimator"]' in mypy_section.group(1)
