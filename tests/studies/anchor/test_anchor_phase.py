"""The anchor phase study (``reasonlab reproduce anchor-phase``): the `cpu-wide-cell` arm's cell protocol (max over
peak learning rates and evaluated epochs, then the seed mean) with the share of runs that compose and the Σlr each
run ends and escapes at, the transition counted per depth and seed, and the study end to end on a tiny override."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import TINY_ANCHOR, reproduce_tiny

from reasonlab.studies.anchor import phase as anchor_phase
from reasonlab.studies.anchor.study import PHASE
from reasonlab.sweep.grid import sweep_configs
from reasonlab.sweep.results import read_results
from reasonlab.sweep.runner import finished_rows, seed_axis

REPO = Path(__file__).resolve().parents[3]


def test_the_cell_protocol_reads_the_best_epoch_and_the_lr_sum_of_each_run(tmp_path):
    """The `cpu-wide-cell` arm's reading on its six committed runs (those of `cpu-wide-wd`): the cells take each
    run's best (4,3) answer over evaluated epochs, the run table its Σlr at the end from its schedule (2,808 steps
    from 2.5e-6 up to 2.5e-4 and down the cosine: 0.365) and at its escapes as recorded."""
    configs = sweep_configs(PHASE.spec("cpu-wide-cell"))[0]
    rows = finished_rows(configs, REPO / "results" / "anchor-phase-cpu-wide-wd")
    configs = [c for c in configs if c.run_id() in {r["run_id"] for r in rows}]
    final = {c.x: c.inferential for c in anchor_phase.draw(configs, rows, tmp_path)[0]}
    cells = {c.x: c.inferential for c in anchor_phase.draw(configs, rows, tmp_path, over_epochs=True)[0]}
    assert len(rows) == 6 and cells[0.8] > final[0.8] and cells[0.5] == final[0.5]  # seed 3's best is not its last
    lines = "\n".join(anchor_phase.cell_protocol_lines(configs, rows))
    assert "γ 0.8: inferential by final label in 2 of 3" in lines and "end at Σlr 0.37–0.37" in lines
    assert "| 0.8 | 3 | 0.00025 | not-fitted | 0.040 / 0.013 | 0.138 | 0.854 | 0.333 | — | 0.365 |" in lines
    report = anchor_phase.report_lines(configs, rows, over_epochs=True)
    assert "## Runs" not in report and any(line.startswith("| 0.8 | 2 | 0.456 |") for line in report)
    assert "## Runs" in anchor_phase.report_lines(configs, rows)  # one run per (γ, depth, seed) there


def test_the_anchor_transition_is_counted_per_depth_and_seed():
    """Symmetric at a smaller γ than inferential, within one depth and seed; the reverse order is not it."""
    def run(g, d, s, label, acc=1.0):
        return {"init.gamma": g, "model.depth": d, "seed": s, "label": label, f"outcome.4-3.{label}": acc}

    rows = [run(0.3, 2, 1, "symmetric"), run(0.7, 2, 1, "inferential"),
            run(0.3, 2, 2, "inferential"), run(0.7, 2, 2, "symmetric"),
            run(0.3, 3, 1, "symmetric"), run(0.7, 3, 1, "not-fitted"),
            run(0.3, 4, 1, "inferential"), run(0.5, 4, 1, "symmetric"), run(0.7, 4, 1, "inferential"),
            run(0.3, 5, 1, "symmetric", 0.6), run(0.7, 5, 1, "inferential", 0.9)]
    assert anchor_phase.transitions(rows) == {(2, 1): True, (2, 2): False, (3, 1): False, (4, 1): False, (5, 1): True}
    # at the study's bar a modal but minority answer does not count: depth 5's symmetric run answers 0.6
    assert anchor_phase.transitions(rows, ("4-3", 0.8)) == {(2, 1): True, (2, 2): False, (3, 1): False,
                                                           (4, 1): False, (5, 1): False}


@pytest.mark.slow
def test_reproduce_anchor_phase_end_to_end_on_a_tiny_override(tmp_path):
    tiny = [*TINY_ANCHOR, "train.epochs=1", "train.eval_every=1"]  # a later override of a field wins
    reproduce_tiny("anchor-phase", tmp_path, tiny, seeds="1,2")  # the arm has 3 seeds; two show the ranges
    sweep_dir = tmp_path / "anchor-phase-cpu"
    rows = read_results(sweep_dir)
    assert len(rows) == 5 * 3 * 2 and all(r["profile"].startswith("anchor-cpu (reduced") for r in rows)
    summary = (sweep_dir / "summary.md").read_text()
    assert "profile `cpu`" in summary and "depth 2:" in summary and "depth 4:" in summary
    assert summary.count("| 0.3 | 2 |") == 2  # one row per cell, one per (γ, depth) in the runs by seed
    assert "The study's transition (symmetric at a smaller γ" in summary and "seed 2: label" in summary
    assert (sweep_dir / "figures" / "phase.png").is_file()
    before = {p: p.stat().st_mtime_ns for p in sweep_dir.rglob("summary.json")}
    reproduce_tiny("anchor-phase", tmp_path, tiny, seeds="1,2")
    assert {p: p.stat().st_mtime_ns for p in sweep_dir.rglob("summary.json")} == before  # nothing retrained

    # the figure comes back from the committed records alone (no checkpoint is committed), into any folder
    for ckpt in sweep_dir.glob("*/checkpoints"):
        shutil.rmtree(ckpt)
    configs = sweep_configs(PHASE.spec("cpu"), grid=seed_axis([1, 2]), overrides=tiny)[0]
    cells, _, drawn = anchor_phase.draw(configs, finished_rows(configs, sweep_dir), tmp_path / "scratch")
    assert len(cells) == 5 * 3 and (tmp_path / "scratch" / "phase.png") in drawn
    body = "\n".join(anchor_phase.report_lines(configs, finished_rows(configs, sweep_dir)))
    assert body in summary  # the docs' section is the summary's, from the records alone
