"""A study is one folder: this one (``gamma_pair``, outside the package) is listed, planned and run by
``reproduce`` through its own class alone, and ``scripts/regenerate_docs.py`` gathers its docs section, which
renders from the run ids pinned in its ``results/<study>/pins.yaml``."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import reasonlab
from reasonlab import registry
from reasonlab.cli import app
from reasonlab.studies.sections import Repository

REPO = Path(__file__).resolve().parents[3]
runner = CliRunner()


@pytest.fixture(scope="module", autouse=True)
def study():
    module = importlib.import_module(__package__)
    reasonlab.register_study(module.GammaPair, replace=True)
    yield module
    registry.unregister_study("gamma-pair")
    for name in [m for m in registry._PLUGINS if m.split(".")[0] == __package__.split(".")[0]]:
        registry._PLUGINS.pop(name)


def cli(*args) -> str:
    result = runner.invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result.output


def test_the_study_is_listed_and_planned_from_its_class(tmp_path):
    assert "gamma-pair" in cli("studies")
    planned = cli("reproduce", "gamma-pair", "--dry-run", "--out", tmp_path)
    assert "sweep gamma-pair-cpu: 2 runs" in planned and "nothing trained" in planned
    assert not (tmp_path / "gamma-pair-cpu").exists()


def test_its_docs_section_renders_from_its_pins_and_regenerate_docs_gathers_it(study, tmp_path, monkeypatch):
    (tmp_path / "results" / "gamma-pair").mkdir(parents=True)
    (tmp_path / study.PINS).write_text("runs:\n  0.3: 0123456789ab\n  0.8: ba9876543210\n")
    (name, section), = study.GammaPair().sections(Repository(tmp_path))
    assert name == "gamma-pair-runs" and section.inputs() == [study.PINS]
    assert section.render() == "- γ 0.3: run `0123456789ab`\n- γ 0.8: run `ba9876543210`\n"
    monkeypatch.syspath_prepend(str(REPO / "scripts"))
    docs = importlib.import_module("regenerate_docs").Docs(Repository(REPO, writes=False))
    assert docs.tables["gamma-pair-runs"].doc == "docs/gamma-pair.md"


@pytest.mark.slow
def test_reproduce_runs_its_arm_and_writes_its_summary(tmp_path):
    cli("reproduce", "gamma-pair", "--out", tmp_path, "--workers", "1", "--threads", "1")
    summary = (tmp_path / "gamma-pair-cpu" / "summary.md").read_text()
    assert summary.startswith("# gamma-pair") and "| γ | label |" in summary
    assert sys.modules[__package__].GammaPair.arms["cpu"].cost.startswith("2 runs")
