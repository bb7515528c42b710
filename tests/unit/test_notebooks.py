"""The notebooks under docs/examples/ run as written: each is a valid nbformat-4 file whose code cells, executed in
order in one namespace in a temporary directory (headless matplotlib, no network, no Jupyter needed), finish in
seconds and leave what their text promises. The quick start loads a run, its model and data, its activations by
hook name, and draws them."""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib
import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples"


def code_cells(notebook: Path) -> list[str]:
    """The notebook's code cells, as source text, after checking it is the nbformat 4 Jupyter opens."""
    nb = json.loads(notebook.read_text())
    assert nb["nbformat"] == 4 and nb["metadata"]["kernelspec"]["language"] == "python", notebook
    for cell in nb["cells"]:
        assert cell["cell_type"] in ("markdown", "code") and isinstance(cell["source"], list), cell
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [] and cell["execution_count"] is None, "store notebooks without outputs"
    return ["".join(cell["source"]) for cell in nb["cells"] if cell["cell_type"] == "code"]


def execute(notebook: Path) -> dict:
    """Run the code cells in order in one namespace; a failure names the cell."""
    namespace: dict = {"__name__": "__main__"}
    for i, source in enumerate(code_cells(notebook), start=1):
        try:
            exec(compile(source, f"{notebook.name} code cell {i}", "exec"), namespace)  # noqa: S102 - our own docs
        except Exception as e:  # noqa: BLE001 - name the cell that failed
            pytest.fail(f"{notebook.name} code cell {i} failed: {type(e).__name__}: {e}\n{source}")
    return namespace


def test_every_example_notebook_is_tested_here():
    assert sorted(p.name for p in EXAMPLES.glob("*.ipynb")) == ["quickstart.ipynb"]


def test_the_quick_start_runs_a_run_to_its_model_its_activations_and_a_plot(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert matplotlib.get_backend().lower() == "agg"  # headless: the figure is drawn to its file alone
    namespace = execute(EXAMPLES / "quickstart.ipynb")
    run, cache = namespace["run"], namespace["cache"]
    assert run.dir.resolve().parent == tmp_path / "runs" / "notebook"
    assert "blocks.0.attn.hook_pattern" in cache and "hook_embed" in cache
    assert namespace["pattern"].shape[-1] == namespace["inputs"].shape[-1]
    assert (tmp_path / "quickstart.png").stat().st_size > 0
    out = capsys.readouterr().out
    assert run.id in out and "activations:" in out
