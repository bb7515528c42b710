"""The benchmarks' and the PrOntoQA + TinyStories study's figures are drawn by plots/ modules from plain records (no
configs, no run directories); the anchor studies' own figures are tested in tests/studies/anchor/."""

from __future__ import annotations

from conftest import figures_written

from reasonlab.plots.benchmarks import plot_benchmark
from reasonlab.plots.language import plot_delta_l, plot_embedding_cosine


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
