"""The one-file route of docs/extending.md: a task of one's own, in one file outside src/reasonlab, registered with
``reasonlab.register_task`` and then trained, swept, tabled, phase-plotted, reported and reproduced through the
command line like a built-in task (the sweep's worker processes import the plug-in again by themselves)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from reasonlab import registry
from reasonlab.cli import app

EXAMPLE = Path(__file__).parents[2] / "docs" / "examples" / "parity_task.py"


@pytest.fixture(scope="module")
def parity():
    spec = importlib.util.spec_from_file_location("parity_task", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    sys.modules["parity_task"] = module
    spec.loader.exec_module(module)
    yield module
    registry.unregister_task("parity")
    registry.unregister_study("parity-gamma")
    registry._PLUGINS.pop("parity_task", None)
    sys.modules.pop("parity_task", None)


def cli(*args) -> str:
    result = CliRunner().invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.slow
def test_a_task_of_ones_own_is_trained_swept_plotted_and_reported(parity, tmp_path):
    sets = [x for item in parity.BASE for x in ("--set", item)]
    out = cli("train", *sets, "--out", tmp_path, "--name", "adhoc", "--quiet")
    assert "outcome" in out and "test_acc" in out
    run_dir = next((tmp_path / "adhoc").iterdir())
    assert (run_dir / "figures" / "run.png").is_file()

    cli("sweep", *sets, "--grid", "init.gamma=0.3,0.8", "--grid", "seed=1,2", "--name", "sw", "--out", tmp_path,
        "--workers", "2", "--threads", "1")
    from reasonlab.sweep.results import read_results

    cli("results", tmp_path / "sw")
    rows = read_results(tmp_path / "sw")
    assert len(rows) == 4 and {r["task.kind"] for r in rows} == {"parity"} and all("final.test_acc" in r for r in rows)
    phase = cli("phase", tmp_path / "sw", "--y", "seed", "--value", "final.test_acc")
    assert "init.gamma=0.3 seed=1" in phase and (tmp_path / "sw" / "figures" / "phase.png").is_file()
    assert "report:" in cli("report", tmp_path / "sw")

    assert "parity-gamma" in cli("studies")
    cli("reproduce", "parity-gamma", "--out", tmp_path, "--workers", "2", "--threads", "1")
    summary = (tmp_path / "parity-gamma-cpu" / "summary.md").read_text()
    assert summary.startswith("# parity-gamma, profile `cpu`") and "| γ | depth | test accuracy | label |" in summary


def test_its_config_errors_are_one_line_like_any_other(parity):
    result = CliRunner().invoke(app, ["train", "--set", "task.kind=parity", "--set", "task.n_bit=3", "--dry-run"])
    assert result.exit_code == 2 and "task.n_bit: unknown field (did you mean task.n_bits?)" in result.output
    result = CliRunner().invoke(app, ["train", "--set", "task.kind=parity", "--set", "task.n_bits=1", "--dry-run"])
    assert result.exit_code == 2 and "task.n_bits:" in result.output


def test_an_unregistered_kind_is_refused_with_the_registered_ones():
    result = CliRunner().invoke(app, ["train", "--set", "task.kind=nosuch", "--dry-run"])
    assert result.exit_code == 2 and "task.kind: 'nosuch' is unknown; choose one of 'anchor'" in result.output


def test_a_config_class_must_name_its_kind():
    from reasonlab.errors import ConfigError
    from reasonlab.kinds.anchor.config import AnchorTaskConfig
    from reasonlab.kinds.base import Kind

    class Other(Kind):
        name = "other"
        config = AnchorTaskConfig
        task = object

    with pytest.raises(ConfigError, match="kind: Literal"):
        registry.register_task(Other)
    with pytest.raises(ConfigError, match="^task kind 'AnchorTaskConfig': no name, config, task, summarize; "):
        registry.register_task(AnchorTaskConfig)
