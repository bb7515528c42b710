"""The studies' figures are drawn by plots/ modules from plain records (no configs, no run directories)."""

from __future__ import annotations

from reasonlab.plots.benchmarks import plot_benchmark
from reasonlab.plots.language import plot_delta_l, plot_embedding_cosine
from reasonlab.studies.anchor_figures import plot_complexity, plot_lr_wd


def _written(paths) -> bool:
    return [p.suffix for p in paths] == [".png", ".svg"] and all(p.stat().st_size > 0 for p in paths)


def test_anchor_study_figures_from_plain_records(tmp_path):
    per_gamma = {0.3: {0: (3.0, 0.9), 1: (4.0, 0.8)}, 0.8: {0: (9.0, 0.5), 1: (11.0, 0.4)}}
    assert _written(plot_complexity(per_gamma, 10, tmp_path / "complexity", "tiny"))
    cells = {(25, 0.01): 0.2, (25, 0.1): 0.5, (50, 0.01): 0.7, (50, 0.1): float("nan")}
    assert _written(plot_lr_wd([("(4,3) inferential", cells), ("(3,4) inferential", cells)], 1e-5,
                               tmp_path / "lr-wd", "tiny"))


def test_benchmark_figure_from_plain_records(tmp_path):
    settings = [{"name": "large init", "sizes": [100, 1000], "values": [0.2, 0.6], "unfit": [100],
                 "converge": [(100, None), (1000, 50.0)], "fit": [(100, None), (1000, 20.0)]}]
    per_category = {"n": 1000, "categories": ["len:≤8", "len:≤16"], "means": {"large init": [0.5, None],
                                                                                 "small init": [None, None]}}
    assert _written(plot_benchmark(settings, [100, 1000], "ood_exact", per_category, "scan — tiny",
                                   tmp_path / "scan"))


def test_language_figures_from_plain_records(tmp_path):
    b = ([10, 20], [0.1, 0.2], [0.05, 0.1], [0.2, 0.3])
    curves = {"γ=0.3": {k: b for k in ("delta_L_train", "delta_L_eval", "prontoqa_train_loss",
                                        "tinystories_train_loss")}}
    assert _written(plot_delta_l(curves, {0.3: [0.1, 0.2, 0.15], 0.8: [0.4]}, tmp_path / "delta-l", "profile: tiny"))
    stages = (["init", "step 500", "final (step 900)"], [0.0, 0.1, 0.2], [0.0, 0.05, 0.1], [0.0, 0.2, 0.3])
    assert _written(plot_embedding_cosine({"γ=0.3": {"prontoqa": stages, "tinystories": stages}},
                                          {"prontoqa": 0.123, "tinystories": 0.531}, tmp_path / "cosine",
                                          "profile: tiny"))
