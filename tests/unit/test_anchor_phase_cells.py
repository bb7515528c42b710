"""``reproduce anchor-phase --profile cpu-wide-cell``: the paper's cell protocol (max over peak learning rates and
evaluated epochs, then the seed mean), the share of runs that compose and the Σlr each run ends and escapes at."""

from __future__ import annotations

from pathlib import Path

from reasonlab.studies.anchor import phase as anchor_phase
from reasonlab.studies.anchor.study import PHASE
from reasonlab.sweep.grid import sweep_configs
from reasonlab.sweep.runner import finished_rows


def test_the_cell_protocol_reads_the_best_epoch_and_the_lr_sum_of_each_run(tmp_path):
    """The `cpu-wide-cell` arm's reading on its six committed runs (those of `cpu-wide-wd`): the cells take each
    run's best (4,3) answer over evaluated epochs, the run table its Σlr at the end from its schedule (2,808 steps
    from 2.5e-6 up to 2.5e-4 and down the cosine: 0.365) and at its escapes as recorded."""
    configs = sweep_configs(PHASE.spec("cpu-wide-cell"))[0]
    rows = finished_rows(configs, Path(__file__).resolve().parents[2] / "results" / "anchor-phase-cpu-wide-wd")
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
