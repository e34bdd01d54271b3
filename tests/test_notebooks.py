"""Every notebook in examples/ runs top to bottom in a fresh kernel, and is saved clean."""

from __future__ import annotations

import os
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from jupyter_tfmem.views.data import MIME_TYPE

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "examples").glob("*.ipynb"))


def test_there_are_examples():
    names = {p.name for p in EXAMPLES}
    assert "quickstart.ipynb" in names
    assert len(names) >= 2


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_notebook_is_saved_without_outputs(path):
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, cell.source[:60]
    assert "widgets" not in nb.metadata  # no saved widget state either


@pytest.mark.slow
@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_notebook_runs(path, monkeypatch):
    # the kernel must import this checkout, installed or not
    paths = [str(ROOT), os.environ.get("PYTHONPATH", "")]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in paths if p))
    monkeypatch.setenv("TF_CPP_MIN_LOG_LEVEL", "2")
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    )
    client.execute()  # raises CellExecutionError on the first failing cell
    outputs = [out for cell in nb.cells if cell.cell_type == "code" for out in cell.outputs]
    assert not [out for out in outputs if out.output_type == "error"]
    uses_magic = any("%tfmem" in cell.source for cell in nb.cells if cell.cell_type == "code")
    if uses_magic:
        bundles = [out.data for out in outputs if out.output_type == "display_data"]
        reports = [b for b in bundles if MIME_TYPE in b]
        assert reports, "a %tfmem cell displayed no report"
        for bundle in reports:
            assert {"text/html", "text/markdown", "text/plain"} <= set(bundle)
