"""The anchor trajectory study: the shipped reference from the authors' logs, and the study end to end on a tiny
model (its figure and its table of our evaluations beside the log's)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from reasonlab.cli import app
from reasonlab.errors import UserError
from reasonlab.studies.anchor.trajectory import (
    _line_names,
    authors_log,
    paper_scale_record,
    paper_scale_runs,
    paper_scale_tally,
    trajectories,
)

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


def _evaluation(seen: float, inf: float, sym: float) -> dict:
    return {"epoch": 3, "seen_test_acc": seen, "heldout_inferential": inf, "heldout_symmetric": sym}


def test_paper_scale_tally_counts_only_fitted_runs_against_the_logged_outcome():
    runs = {"0.5": {"a": {"seed": 1, "evaluations": [_evaluation(0.96, 0.0, 0.95)]},
                    "b": {"seed": 2, "evaluations": [_evaluation(0.96, 0.0, 0.94)]}},   # fitted, not symmetric enough
            "0.8": {"a": {"seed": 1, "evaluations": [_evaluation(0.5, 0.3, 0.0), _evaluation(0.96, 0.9, 0.05)]},
                    "b": {"seed": 2, "evaluations": [_evaluation(0.99, 0.95, 0.06)]},   # symmetric too high
                    "c": {"seed": 3, "evaluations": [_evaluation(0.94, 0.99, 0.0)]},    # not fitted: not counted
                    "d": {"seed": 1, "evaluations": [_evaluation(0.97, 0.2, 0.0), _evaluation(0.98, 0.91, 0.0)]}},
            "0.7": {"a": {"seed": 1, "evaluations": [_evaluation(1.0, 1.0, 0.0)]}}}    # no logged outcome at 0.7
    assert paper_scale_tally(runs) == {"0.5": (1, 2, 2), "0.8": (2, 3, 2)}  # "d" is seed 1 trained again


def test_shipped_paper_scale_runs_are_the_committed_results():
    """The package's copy of reasonlab's paper-scale runs is what the committed run folders give, every one of
    them, so the demo's figure never draws numbers a reader cannot regenerate (scripts/trajectory_figure.py
    --ship)."""
    shipped = paper_scale_runs()
    repo = Path(__file__).resolve().parents[3]
    committed = sorted(d.parent for d in (repo / "results" / "anchor-trajectory").rglob("metrics.parquet")
                       if (d.parent / "config.yaml").is_file())
    assert sorted(repo / run["folder"] for named in shipped["runs"].values() for run in named.values()) == committed
    folders = [repo / run["folder"] for named in shipped["runs"].values() for run in named.values()]
    assert json.loads(json.dumps(paper_scale_record(folders, repo))) == shipped
    assert all(run["finished"] == (repo / run["folder"] / "summary.json").is_file()
               for named in shipped["runs"].values() for run in named.values())


def test_two_folders_drawing_as_one_line_are_refused(tmp_path):
    repo = Path(__file__).resolve().parents[3]
    config = (repo / "results" / "anchor-trajectory" / "eccb67ef6ca2" / "config.yaml").read_text()
    for parent in ("a/x", "b/x", "c/y"):
        (tmp_path / parent).mkdir(parents=True)
        (tmp_path / parent / "config.yaml").write_text(config)
    names = [n for _, (_, n, _) in _line_names([tmp_path / "a/x", tmp_path / "c/y"]).items()]
    assert names == ["seed 1", "seed 1 (c)"]
    with pytest.raises(UserError, match="already draws as γ 0.5 seed 1"):
        _line_names([tmp_path / "a/x", tmp_path / "c/y", tmp_path / "c/y"])


@pytest.mark.slow
def test_reproduce_trajectory_end_to_end(tmp_path):
    args = ["reproduce", "anchor-trajectory", "--out", str(tmp_path), "--workers", "2"]
    for item in TINY:
        args += ["--set", item]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    sweep = tmp_path / "anchor-trajectory"
    assert (sweep / "figures" / "trajectory.png").stat().st_size > 10_000
    table = [line for line in (sweep / "summary.md").read_text().splitlines() if line.startswith("| 0.")]
    assert [row.split(" | ")[2] for row in table if row.startswith("| 0.5 | seed 1 ")] == ["3", "6", "9"]
    epochs = [row.split(" | ")[2] for row in table if row.startswith("| 0.8 | seed 1 ")]
    assert epochs == [str(e) for e in range(3, 28, 3)]
    assert "/ 0.729 |" in next(row for row in table if row.startswith("| 0.8 | seed 1 | 18 |"))  # the log's (4,3) at 18

    # An unfinished run's snapshot (config and metrics so far, no summary) is drawn beside finished runs, keyed by
    # γ and seed from its own config, and the script's table lists it.
    small = next(d for d in sweep.iterdir() if (d / "config.yaml").is_file() and "gamma: 0.8" in
                 (d / "config.yaml").read_text())
    snapshot = tmp_path / "snap" / f"{small.name}.partial"
    snapshot.mkdir(parents=True)
    for name in ("config.yaml", "metrics.parquet"):
        (snapshot / name).write_bytes((small / name).read_bytes())
    ours = trajectories([snapshot])
    assert list(ours) == ["0.8"] and list(ours["0.8"]) == ["seed 1"]
    assert [e["epoch"] for e in ours["0.8"]["seed 1"]["evaluations"]] == list(range(3, 28, 3))
    assert all("lr_sum" in e for e in ours["0.8"]["seed 1"]["evaluations"])
    # the same run trained again (another machine) is a line of its own, named after its folder
    again = tmp_path / "rerun" / snapshot.name
    again.mkdir(parents=True)
    for name in ("config.yaml", "metrics.parquet"):
        (again / name).write_bytes((snapshot / name).read_bytes())
    assert list(trajectories([snapshot, again])["0.8"]) == ["seed 1", "seed 1 (rerun)"]
    script = Path(__file__).resolve().parents[3] / "scripts" / "trajectory_figure.py"
    done = subprocess.run([sys.executable, str(script), "--out", str(tmp_path / "fig"), str(snapshot), str(again)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    table = (tmp_path / "fig" / "summary.md").read_text()
    assert "| 0.8 | seed 1 | 27 |" in table and "| 0.8 | seed 1 (rerun) | 27 |" in table
    bad = subprocess.run([sys.executable, str(script), "--out", str(tmp_path / "fig"), str(tmp_path)],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "not a run folder" in bad.stderr
    # a replay of the authors' draws is one more line, and a caption says what it is
    point = {"seen_test_acc": 0.2, "heldout_inferential": 0.3, "heldout_symmetric": 0.01}
    replay = {"settings": {"gamma": "0.8", "draws": "theirs", "init_seed": 1, "eval_rows": 2000},
              "epochs": [{"epoch": 3, "loss": 4.1}], "evaluations": [{"epoch": 3, "replay": point, "log": None}]}
    (tmp_path / "replay.json").write_text(json.dumps(replay))
    (tmp_path / "other.json").write_text(json.dumps({"settings": {}}))
    for extra, code in (("replay.json", 0), ("other.json", 2)):
        done = subprocess.run([sys.executable, str(script), "--out", str(tmp_path / "fig"), "--replay",
                               str(tmp_path / extra), str(snapshot)], capture_output=True, text=True)
        assert done.returncode == code, done.stderr
    assert "not a replay.json" in done.stderr and done.stderr.count("\n") == 1
    table = (tmp_path / "fig" / "summary.md").read_text()
    assert "| 0.8 | step on the authors' draws (theirs, init seed 1; replay) | 3 | 0.043 | 0.200 / 0.018 |" in table
    # two replays of the same draw (another machine or thread count) are two lines, each named by its file
    (tmp_path / "again.json").write_text(json.dumps(replay))
    done = subprocess.run([sys.executable, str(script), "--out", str(tmp_path / "fig"), "--replay",
                           str(tmp_path / "replay.json"), "--replay", str(tmp_path / "again.json"), str(snapshot)],
                          capture_output=True, text=True)
    table = (tmp_path / "fig" / "summary.md").read_text()
    assert done.returncode == 0 and all(f"(theirs, init seed 1; replay {stem}) | 3 |" in table
                                        for stem in ("replay", "again")), done.stderr + table


def test_seeds_arm_adds_seeds_of_the_small_initialization(tmp_path):
    result = CliRunner().invoke(app, ["reproduce", "anchor-trajectory", "--profile", "seeds", "--out", str(tmp_path),
                                      "--dry-run"])
    assert result.exit_code == 0, result.output
    runs = re.findall(r"init\.gamma\+train\.epochs\+seed=\S+", result.output.split("->", 1)[1])
    assert runs == ["init.gamma+train.epochs+seed=0.5/9/1", "init.gamma+train.epochs+seed=0.8/27/1",
                    "init.gamma+train.epochs+seed=0.8/27/2", "init.gamma+train.epochs+seed=0.8/27/3"]
    assert not tmp_path.joinpath("anchor-trajectory").exists()
