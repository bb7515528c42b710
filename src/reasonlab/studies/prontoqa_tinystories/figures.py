"""The study's figures: ΔL along training and the embedding cosines per stage, each per γ as a band over seeds."""

from __future__ import annotations

from pathlib import Path
from statistics import mean

from reasonlab.config import RunConfig
from reasonlab.plots.language import Band, plot_delta_l, plot_embedding_cosine
from reasonlab.studies.prontoqa_tinystories import PAPER_COSINE
from reasonlab.studies.prontoqa_tinystories.measure import per_gamma, with_cosines


def draw_figures(main: list[RunConfig], measured: dict, figures_dir: Path) -> list[Path]:
    """``delta-l.png|svg`` and ``cosine.png|svg`` of the main group's measured runs (none when none is measured;
    the cosine figure of those with cosines); also what ``scripts/regenerate_docs.py`` draws the docs' copies with."""
    by_gamma = per_gamma(main, measured)
    if not by_gamma:
        return []
    caption = f"profile: {main[0].profile}"
    window = {g: [v for m in ms if (v := m["delta_L_train_window"]) is not None] for g, ms in by_gamma.items()}
    cosines = {f"γ={g}": cosine_bands(ms) for g, ms in per_gamma(main, with_cosines(measured)).items()}
    return [*plot_delta_l(delta_l_bands(by_gamma), {g: v for g, v in window.items() if v},
                          figures_dir / "delta-l", caption),
            *(plot_embedding_cosine(cosines, PAPER_COSINE, figures_dir / "cosine", caption) if cosines else [])]


def band(series: list[list[tuple[float, float]]]) -> Band:
    """Mean, min and max over seeds at the x every seed has (x, value) for."""
    values = [dict(s) for s in series]
    xs = sorted(set.intersection(*(set(v) for v in values))) if values else []
    at = [[v[x] for v in values] for x in xs]
    return xs, [mean(a) for a in at], [min(a) for a in at], [max(a) for a in at]


def delta_l_bands(by_gamma: dict[float, list[dict]]) -> dict[str, dict[str, Band]]:
    """Per γ, over its seeds: ΔL on the training subsets and on the eval splits, and each source's training loss."""
    metrics = ("delta_L_train", "delta_L_eval", "prontoqa_train_loss", "tinystories_train_loss")
    return {f"γ={g}": {k: band([m["rows"].series("pooled", k, clock="step") for m in ms]) for k in metrics}
            for g, ms in by_gamma.items()}


def cosine_bands(ms: list[dict]) -> dict[str, Band]:
    """Per source, the cosine over the stages every seed has (in order), as a band over seeds; x are stage labels
    (the x of ``band`` are their positions)."""
    stages = [s for s in ms[0]["cosine"] if all(s in m["cosine"] for m in ms)]
    out = {}
    for source in ("prontoqa", "tinystories"):
        xs, mid, lo, hi = band([[(i, m["cosine"][s][source]) for i, s in enumerate(stages)] for m in ms])
        out[source] = ([stages[int(i)] for i in xs], mid, lo, hi)
    return out
