"""Every notebook in notebooks/ runs top to bottom in a real Jupyter kernel (nbclient +
ipykernel), stored without outputs; each ends with a cell asserting what it showed. The
quickstart is then run a second time cell by cell in the same kernel (re-running cells is
safe)."""

import glob
import os

import nbformat
import pytest
from helpers import ROOT
from nbclient import NotebookClient

NOTEBOOKS = sorted(glob.glob(os.path.join(ROOT, "notebooks", "*.ipynb")))
RERUN = {"quickstart.ipynb"}


def test_the_notebooks_are_there():
    names = {os.path.basename(path) for path in NOTEBOOKS}
    assert {
        "quickstart.ipynb",
        "migrating_a_tf1_script.ipynb",
        "canned_feature_columns_export_serving.ipynb",
        "bert_style_tpu_finetune.ipynb",
        "hooks_early_stopping_tensorboard.ipynb",
        "from_model_fn_to_keras.ipynb",
    } <= names


@pytest.mark.parametrize("path", NOTEBOOKS, ids=os.path.basename)
def test_notebook_is_stored_without_outputs(path):
    notebook = nbformat.read(path, as_version=4)
    nbformat.validate(notebook)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            assert not cell.outputs and cell.execution_count is None, cell.source[:60]
    assert "assert" in notebook.cells[-1].source  # it checks what it showed


@pytest.mark.parametrize("path", NOTEBOOKS, ids=os.path.basename)
def test_notebook_runs_in_a_kernel(path, tmp_path):
    notebook = nbformat.read(path, as_version=4)
    if os.path.basename(path) in RERUN:
        notebook.cells += [nbformat.from_dict(dict(c)) for c in notebook.cells[1:]]
    client = NotebookClient(
        notebook,
        timeout=600,
        kernel_name="python3",
        resources={"metadata": {"path": str(tmp_path)}},  # the kernel's working directory
    )
    client.execute()  # raises CellExecutionError naming the cell and its traceback
    errors = [o for c in notebook.cells for o in c.get("outputs", []) if o.output_type == "error"]
    assert not errors
