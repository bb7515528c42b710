"""The anchor learning rate × weight decay study (``reasonlab reproduce anchor-lr-wd``): its figure from plain
records, the trend counted seed by seed, and the study end to end on a tiny override."""

from __future__ import annotations

import pytest
from conftest import TINY_ANCHOR, figures_written, reproduce_tiny

from reasonlab.studies.anchor.figures import plot_lr_wd
from reasonlab.sweep.results import read_results


def test_the_lr_wd_figure_from_plain_records(tmp_path):
    cells = {(25, 0.01): 0.2, (25, 0.1): 0.5, (50, 0.01): 0.7, (50, 0.1): float("nan")}
    assert figures_written(plot_lr_wd([("(4,3) inferential", cells), ("(3,4) inferential", cells)], 1e-5,
                               tmp_path / "lr-wd", "tiny"))


def test_lr_wd_report_counts_the_trend_per_seed():
    """The cells are means over seeds; a trend along an axis is counted seed by seed (seed 2 runs the other way
    along the learning rate), and every run is listed."""
    from reasonlab.studies.anchor.lr_wd import report_lines

    rows = []
    for seed in (1, 2, 3):
        for m in (25, 50):
            for wd in (0.01, 1.0):
                lr_gain = (0.2 if m == 50 else 0.0) * (-1 if seed == 2 else 1)
                value = 0.3 + lr_gain + (0.1 if wd == 1.0 else 0.0)
                rows.append({"train.lr_multiplier": m, "train.weight_decay": wd, "seed": seed, "label": "x",
                             "run_id": f"r{seed}{m}{wd}", "outcome.4-3.inferential": value,
                             "outcome.3-4.inferential": value})
    text = "\n".join(report_lines(rows, 1e-5, level=4))
    assert "#### Cells" in text and "| 5.0e-04 | 0.37 / 0.37 | 0.47 / 0.47 |" in text
    assert "(4,3) inferential accuracy per peak lr (mean over the other axis and the seeds): 2.5e-04: 0.350, " \
           "5.0e-04: 0.417 — a larger peak lr pushes towards the inferential solution in 2 of 3 seeds (1, 3) " \
           "(largest − smallest, per seed: +0.200, -0.200, +0.200)." in text
    assert "a larger weight decay pushes towards the inferential solution in 3 of 3 seeds (largest − smallest, per " \
           "seed: +0.100, +0.100, +0.100)." in text
    assert text.count("| x | r") == 12


def test_a_dip_between_the_ends_is_no_push():
    """Over three weight decays, a seed whose accuracy dips in the middle does not count, however its ends compare."""
    from reasonlab.studies.anchor.lr_wd import PAIRS, pushes

    rows = [{"train.lr_multiplier": 25, "train.weight_decay": wd, "seed": seed,
             "outcome.4-3.inferential": value, "outcome.3-4.inferential": value}
            for seed, values in ((1, (0.4, 0.5, 0.6)), (3, (0.560, 0.548, 0.591)))
            for wd, value in zip((0.01, 0.1, 1.0), values, strict=True)]
    assert pushes(rows, PAIRS[0], axis=1) == {1: True, 3: False}


@pytest.mark.slow
def test_reproduce_anchor_lr_wd_end_to_end_on_a_tiny_override(tmp_path):
    reproduce_tiny("anchor-lr-wd", tmp_path, TINY_ANCHOR, seeds="1")
    sweep_dir = tmp_path / "anchor-lr-wd-cpu"
    rows = read_results(sweep_dir)
    assert len(rows) == 9 and {r["model.depth"] for r in rows} == {3}
    assert all("outcome.3-4.inferential" in r and "outcome.4-3.inferential" in r for r in rows)
    summary = (sweep_dir / "summary.md").read_text()
    assert summary.count("pushes towards the inferential solution in") == 4  # two pairs × (lr, wd), per seed
    assert (sweep_dir / "figures" / "lr-wd.png").is_file()
