"""Every notebook in notebooks/ runs top to bottom (its code cells, in one namespace, as a
kernel would), and its second run of every cell works too (re-running cells is safe)."""

import glob
import json
import os

import pytest
from helpers import ROOT

NOTEBOOKS = sorted(glob.glob(os.path.join(ROOT, "notebooks", "*.ipynb")))


def code_cells(path):
    with open(path, encoding="utf-8") as f:
        notebook = json.load(f)
    return ["".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "code"]


def test_there_is_a_notebook():
    assert NOTEBOOKS


@pytest.mark.parametrize("path", NOTEBOOKS, ids=os.path.basename)
def test_notebook_runs_and_reruns(path, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": "__main__"}
    cells = code_cells(path)
    for index, source in enumerate(cells + cells[1:], start=1):  # then each cell again
        try:
            exec(compile(source, f"{os.path.basename(path)}[cell {index}]", "exec"), namespace)  # noqa: S102
        except Exception as exc:  # pragma: no cover - the failure message is the point
            raise AssertionError(f"cell {index} of {path} failed: {exc!r}") from exc
    assert namespace["metrics"]["accuracy"] > 0.8
