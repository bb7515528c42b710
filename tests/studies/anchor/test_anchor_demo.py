"""The anchor phase study's demo arm (``reasonlab demo anchor``) end to end on a tiny override and its verdict read
from the numbers; the trajectory study's (``reasonlab demo trajectory``), drawn from the shipped runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from reasonlab.cli import app
from reasonlab.records import finished_runs
from reasonlab.studies.anchor.demo import DEMO_GAMMAS

runner = CliRunner()


@pytest.mark.slow
def test_anchor_demo_end_to_end_on_a_tiny_override(tmp_path: Path) -> None:
    small = ["--set", "train.epochs=1", "--set", "task.n_train_per_pair=40", "--set", "task.n_test_per_pair=8",
             "--set", "model.d_model=16", "--set", "model.d_k=8", "--set", "model.d_v=8", "--set", "model.d_ff=32",
             "--set", "train.batch_size=64"]
    result = runner.invoke(app, ["demo", "anchor", "--out", str(tmp_path), "--workers", "1", *small])
    assert result.exit_code == 0, result.output
    runs = finished_runs(tmp_path / "demo-anchor")
    assert len(runs) == 2 and all((r / "figures" / "run.png").is_file() for r in runs)
    gammas = sorted(yaml.safe_load((r / "config.yaml").read_text())["init"]["gamma"] for r in runs)
    assert gammas == sorted(DEMO_GAMMAS)
    for r in runs:
        assert json.loads((r / "summary.json").read_text())["label"] in result.output
    assert (tmp_path / "demo-anchor" / "figures" / "demo.png").is_file()  # both beside the authors' log, on Σlr
    said = " ".join(result.output.split())
    assert f"At this reduced profile γ {DEMO_GAMMAS[0]} ended" in said and "at small init" in said
    assert "shows" in said or "does NOT show" in said
    # beside reasonlab's own paper-scale runs, shipped with the package, with their count said
    assert "At paper scale on this CPU" in said and "γ 0.8 reached the log's inferential answer in" in said
    table = runner.invoke(app, ["results", str(tmp_path / "demo-anchor"), "--sql",
                                "SELECT run_id, label FROM runs ORDER BY run_id"])
    assert table.exit_code == 0, table.output
    assert all(r.name in table.output for r in runs)  # the demo's store reads as a sweep's
    phase = runner.invoke(app, ["phase", str(tmp_path / "demo-anchor")])
    assert phase.exit_code == 0 and all(f"{g}" in phase.output for g in DEMO_GAMMAS), phase.output


def _end(label: str, inf: float | None, sym: float | None, escape_lr: float | None, escape_inf: float = 0.0) -> dict:
    return {"label": label, "seen": 0.99, "inferential": inf, "symmetric": sym, "wall_time_s": 1.0,
            "escaped": escape_lr is not None, "escape_lr": escape_lr, "escape_epoch": 2,
            "escape_inferential": escape_inf, "escape_symmetric": 0.0}


@pytest.mark.slow
def test_demo_trajectory_draws_the_shipped_paper_scale_runs_without_training(tmp_path: Path) -> None:
    result = runner.invoke(app, ["demo", "trajectory", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "demo-trajectory" / "trajectory.png").is_file()
    assert "At paper scale on this CPU" in " ".join(result.output.split())
    verdict = result.output.split("At paper scale")[1].split("\nnext:")[0].splitlines()
    assert len(verdict) > 2  # the verdict wraps at the console's width, not one line of hundreds of characters
    assert not any(p.name.endswith(".partial") or p.name == "sweep.json" for p in tmp_path.rglob("*"))


def test_demo_verdict_says_what_the_numbers_show_and_no_more() -> None:
    from reasonlab.kinds.anchor.config import Pair
    from reasonlab.studies.anchor.demo import demo_end, demo_verdict

    large, small = DEMO_GAMMAS
    at_bar = demo_verdict({large: _end("symmetric", 0.0, 0.9, 0.3), small: _end("inferential", 0.85, 0.0, 1.2, 0.8)})
    assert "shows, at its bar" in at_bar and "4.0× later" in at_bar and "fell" not in at_bar
    below = demo_verdict({large: _end("symmetric", 0.0, 0.79, 0.3), small: _end("inferential", 0.52, 0.0, 0.9, 0.63)})
    assert "below its bar of 0.8" in below and "fell to 0.52" in below and "shows, at" not in below
    none = demo_verdict({large: _end("symmetric", 0.0, 1.0, 0.3), small: _end("not-fitted", 0.1, 0.0, None)})
    assert "does NOT show" in none and "later" not in none
    early = demo_verdict({large: _end("symmetric", 0.0, 1.0, 0.6), small: _end("other", 0.1, 0.0, 0.3)})
    assert "2.0× earlier than the large init" in early
    assert "not both finished" in demo_verdict({large: _end("symmetric", 0.0, 1.0, 0.3)})
    # a diverged run's summary has no outcome for the pair and no final figures: said as such, not a traceback
    diverged = demo_end({"label": "diverged", "outcome": {"pairs": {}}, "final": {}, "wall_time_s": 3.0}, Pair(4, 3))
    assert diverged["inferential"] is None and not diverged["escaped"]
    said = demo_verdict({large: _end("symmetric", 0.0, 1.0, 0.3), small: diverged})
    assert "γ 0.85 ended diverged ((4,3) inferential —, symmetric —, seen-pair —)" in said
