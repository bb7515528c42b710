"""The studies' figures are drawn by plots/ modules from plain records (no configs, no run directories)."""

from __future__ import annotations

from conftest import figures_written

from reasonlab.plots.benchmarks import plot_benchmark
from reasonlab.plots.language import plot_delta_l, plot_embedding_cosine
from reasonlab.studies.anchor.figures import plot_complexity, plot_lr_wd


def test_anchor_study_figures_from_plain_records(tmp_path):
    per_gamma = {0.3: {0: (3.0, 0.9), 1: (4.0, 0.8)}, 0.8: {0: (9.0, 0.5), 1: (11.0, 0.4)}}
    assert figures_written(plot_complexity(per_gamma, 10, tmp_path / "complexity", "tiny"))
    cells = {(25, 0.01): 0.2, (25, 0.1): 0.5, (50, 0.01): 0.7, (50, 0.1): float("nan")}
    assert figures_written(plot_lr_wd([("(4,3) inferential", cells), ("(3,4) inferential", cells)], 1e-5,
                               tmp_path / "lr-wd", "tiny"))


def test_benchmark_figure_from_plain_records(tmp_path):
    settings = [{"name": "large init", "sizes": [100, 1000], "values": [0.2, 0.6], "unfit": [100],
                 "runs": [(100, 0.1), (100, 0.3), (1000, 0.6), (1000, 0.6)],
                 "converge": [(100, None), (1000, 50.0)], "fit": [(100, None), (1000, 20.0)]}]
    per_category = {"n": 1000, "categories": ["len:≤8", "len:≤16"], "means": {"large init": [0.5, None],
                                                                                 "small init": [None, None]}}
    assert figures_written(plot_benchmark(settings, [100, 1000], "ood_exact", per_category, "scan — tiny",
                                   tmp_path / "scan"))


def test_language_figures_from_plain_records(tmp_path):
    b = ([10, 20], [0.1, 0.2], [0.05, 0.1], [0.2, 0.3])
    curves = {"γ=0.3": {k: b for k in ("delta_L_train", "delta_L_eval", "prontoqa_train_loss",
                                        "tinystories_train_loss")}}
    assert figures_written(plot_delta_l(curves, {0.3: [0.1, 0.2, 0.15], 0.8: [0.4]}, tmp_path / "delta-l",
                                        "profile: tiny"))
    stages = (["init", "step 500", "final (step 900)"], [0.0, 0.1, 0.2], [0.0, 0.05, 0.1], [0.0, 0.2, 0.3])
    assert figures_written(plot_embedding_cosine({"γ=0.3": {"prontoqa": stages, "tinystories": stages}},
                                          {"prontoqa": 0.123, "tinystories": 0.531}, tmp_path / "cosine",
                                          "profile: tiny"))


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


def test_the_anchor_transition_is_counted_per_depth_and_seed():
    """Symmetric at a smaller γ than inferential, within one depth and seed; the reverse order is not it."""
    from reasonlab.studies.anchor.phase import transitions

    def run(g, d, s, label, acc=1.0):
        return {"init.gamma": g, "model.depth": d, "seed": s, "label": label, f"outcome.4-3.{label}": acc}

    rows = [run(0.3, 2, 1, "symmetric"), run(0.7, 2, 1, "inferential"),
            run(0.3, 2, 2, "inferential"), run(0.7, 2, 2, "symmetric"),
            run(0.3, 3, 1, "symmetric"), run(0.7, 3, 1, "not-fitted"),
            run(0.3, 4, 1, "inferential"), run(0.5, 4, 1, "symmetric"), run(0.7, 4, 1, "inferential"),
            run(0.3, 5, 1, "symmetric", 0.6), run(0.7, 5, 1, "inferential", 0.9)]
    assert transitions(rows) == {(2, 1): True, (2, 2): False, (3, 1): False, (4, 1): False, (5, 1): True}
    # at the study's bar a modal but minority answer does not count: depth 5's symmetric run answers 0.6
    assert transitions(rows, ("4-3", 0.8)) == {(2, 1): True, (2, 2): False, (3, 1): False, (4, 1): False,
                                              (5, 1): False}


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
