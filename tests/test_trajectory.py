"""The anchor trajectory study: the shipped reference from the authors' logs, and the study end to end on a tiny
model (its figure and its table of our evaluations beside the log's)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from reasonlab.cli import app
from reasonlab.studies.anchor_trajectory import authors_log

TINY = ["task.n_train_per_pair=64", "task.n_test_per_pair=16", "model.d_model=16", "model.d_k=8", "model.d_v=8",
        "model.d_ff=32", "train.batch_size=64", "train.warmup_epochs=1", "train.cosine_epochs=20",
        "train.base_lr=1e-3"]


def test_reference_holds_the_logged_figures_of_the_spec():
    ref = authors_log()
    assert ref["source"]["repository"] == "xuzhiqin1990/understanding_dl"
    small = {e["epoch"]: e for e in ref["runs"]["0.8"]["evaluations"]}
    for epoch, seen, inf in ((18, 0.56, 0.73), (21, 0.75, 0.75), (24, 0.99, 0.96)):  # spec §6b
        assert small[epoch]["seen_test_acc"] == pytest.approx(seen, abs=0.005)
        assert small[epoch]["heldout_inferential"] == pytest.approx(inf, abs=0.005)
        assert small[epoch]["heldout_symmetric"] <= 0.001
    large = {e["epoch"]: e for e in ref["runs"]["0.5"]["evaluations"]}
    assert large[3]["heldout_symmetric"] == pytest.approx(0.75, abs=0.005) and large[9]["heldout_symmetric"] == 1.0
    losses = [r["loss"] for r in ref["runs"]["0.8"]["train_loss"]]
    assert losses[:4] == pytest.approx([4.7682, 4.5071, 4.1231, 3.8600])  # epochs 1-4, counted from 1


def test_reproduce_trajectory_end_to_end(tmp_path):
    args = ["reproduce", "anchor-trajectory", "--out", str(tmp_path), "--workers", "2"]
    for item in TINY:
        args += ["--set", item]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    sweep = tmp_path / "anchor-trajectory"
    assert (sweep / "figures" / "trajectory.png").stat().st_size > 10_000
    table = [line for line in (sweep / "summary.md").read_text().splitlines() if line.startswith("| 0.")]
    assert [row.split(" | ")[1] for row in table if row.startswith("| 0.5 ")] == ["3", "6", "9"]
    assert [row.split(" | ")[1] for row in table if row.startswith("| 0.8 ")] == [str(e) for e in range(3, 28, 3)]
    assert "/ 0.729 |" in next(row for row in table if row.startswith("| 0.8 | 18 |"))  # the log's (4,3) at 18
