"""The anchor complexity study (``reasonlab reproduce anchor-complexity``): its figure from plain records, the
sensitivity comparison decided only where censoring cannot change it, and the study end to end on a tiny override."""

from __future__ import annotations

import pytest
from conftest import TINY_ANCHOR, figures_written, reproduce_tiny

from reasonlab.studies.anchor.figures import plot_complexity
from reasonlab.sweep.results import read_results


def test_the_complexity_figure_from_plain_records(tmp_path):
    per_gamma = {0.3: {0: (3.0, 0.9), 1: (4.0, 0.8)}, 0.8: {0: (9.0, 0.5), 1: (11.0, 0.4)}}
    assert figures_written(plot_complexity(per_gamma, 10, tmp_path / "complexity", "tiny"))


def test_complexity_sensitivity_is_decided_only_where_censoring_cannot_change_it():
    """A run that never fits makes its spread a lower bound: the comparison is decided only when the bound points
    the same way; a γ that never fits at all is not testable, not a failure of the hypothesis."""
    from reasonlab.report.markdown import held_in
    from reasonlab.studies.anchor.complexity import more_sensitive, sensitivity

    def run(g, s, k, fit):
        return {"gamma": g, "seed": s, "k": k, "fit_epoch": fit}

    table = [run(0.3, s, k, 4) for s in (1, 2, 3, 4) for k in (0, 1)]
    table += [run(0.6, 1, 0, 6), run(0.6, 1, 1, None),  # spread ≥ 5 > 0: more sensitive, decided
              run(0.6, 2, 0, 4), run(0.6, 2, 1, 4),  # 0 vs 0: not more sensitive
              run(0.6, 3, 0, None), run(0.6, 3, 1, None),  # never fits: not testable
              run(0.6, 4, 0, 10), run(0.6, 4, 1, None)]  # spread ≥ 1 > 0: decided
    table += [run(0.8, 1, 0, 10), run(0.8, 1, 1, None)]  # ≥ 1 > 0
    spread = sensitivity(table, 10)
    assert more_sensitive(spread, 0.6, 0.3) == {1: True, 2: False, 3: None, 4: True}
    assert held_in(more_sensitive(spread, 0.6, 0.3)) == "2 of 3 seeds (1, 4); 1 more not testable"
    assert held_in({1: None, 2: None}) == "no seed: not testable in any of 2"
    bounded_ref = sensitivity([run(0.3, 1, 0, 4), run(0.3, 1, 1, None), run(0.6, 1, 0, 4), run(0.6, 1, 1, 9),
                               run(0.3, 2, 0, 4), run(0.3, 2, 1, None), run(0.6, 2, 0, 1), run(0.6, 2, 1, 10)], 10)
    assert more_sensitive(bounded_ref, 0.6, 0.3) == {1: False, 2: None}  # 5 < ≥ 7: not; 9 against ≥ 7: cannot say


@pytest.mark.slow
def test_reproduce_anchor_complexity_end_to_end_on_a_tiny_override(tmp_path):
    from reasonlab.studies.anchor.complexity import epochs_to_fit

    reproduce_tiny("anchor-complexity", tmp_path, TINY_ANCHOR, seeds="2")
    sweep_dir = tmp_path / "anchor-complexity-cpu"
    rows = read_results(sweep_dir)
    assert sorted({r["task.complexity_k"] for r in rows}) == list(range(7)) and len(rows) == 21
    assert all(r["task.held_out_pairs"] == "[]" for r in rows)  # every pair trained
    summary = (sweep_dir / "summary.md").read_text()
    assert "## The hypothesis" in summary and summary.count("| 0.8 | 2 |") == 7
    line = next(x for x in summary.splitlines() if x.startswith("- γ 0.8 more sensitive to k than γ 0.3"))
    assert "of 1 seed;" in line or "no seed: not testable in any of 1;" in line  # the one seed, decided or censored
    assert (sweep_dir / "figures" / "complexity.png").is_file()
    fit = epochs_to_fit(sweep_dir / rows[0]["run_id"])
    assert fit is None or 1 <= fit <= 2
