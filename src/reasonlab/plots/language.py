"""Figures of the language-model half of the reasoning-bias study (PrOntoQA + TinyStories, spec §4, E2–E3), from
plain records: ΔL and the per-source training loss over steps and ΔL̄ per γ, each over seeds (mean line, min–max
band), and the embedding cosines per stage (Fig. 7B)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import matplotlib.pyplot as plt

from reasonlab.plots import save_figure

SOURCES = (("prontoqa", "-", "tab:blue"), ("tinystories", "--", "tab:orange"))
Band = tuple[list, list[float], list[float], list[float]]  # x, mean, min, max over seeds


def _draw(ax, b: Band, style: str = "-", **kw) -> None:
    x, mid, lo, hi = b
    (line,) = ax.plot(x, mid, style, **kw)
    ax.fill_between(x, lo, hi, color=line.get_color(), alpha=0.2, lw=0)


def plot_delta_l(curves: dict[str, dict[str, Band]], window: dict[float, list[float]], out_base: Path,
                 caption: str, span: tuple[float, float] = (0.05, 0.5)) -> list[Path]:
    """Per curve label (γ): ΔL on the training subsets (primary) and on the eval splits, and each source's
    training loss, as seed bands over steps (``delta_L_train``, ``delta_L_eval``, ``<source>_train_loss``); and
    ΔL̄ per γ (``window``: one value per seed) with its mean and range. The ΔL̄ window is shaded."""
    fig, axes = plt.subplots(2, 2, figsize=(12, 8))
    (ax_t, ax_e), (ax_l, ax_w) = axes
    for i, (label, bands) in enumerate(curves.items()):
        colour = f"C{i}"
        _draw(ax_t, bands["delta_L_train"], color=colour, label=label)
        _draw(ax_e, bands["delta_L_eval"], color=colour, label=label)
        for source, style, _ in SOURCES:
            _draw(ax_l, bands[f"{source}_train_loss"], style, color=colour, label=f"{source} {label}")
    for ax, what in ((ax_t, "training subsets (primary)"), (ax_e, "eval splits")):
        xs = [x for bands in curves.values() for x in bands["delta_L_train"][0]]
        if xs:
            ax.axvspan(span[0] * max(xs), span[1] * max(xs), color="grey", alpha=0.1, label="ΔL̄ window")
        ax.set(xlabel="step", ylabel="ΔL = (L_TS − L_PrOntoQA) / L_PrOntoQA", title=f"ΔL on the {what}")
        ax.legend(fontsize=8)
    ax_l.set(xlabel="step", ylabel="cross-entropy per token", title="training loss per source (— PrOntoQA, "
             "-- TinyStories)")
    ax_l.legend(fontsize=6, ncol=2)
    gammas = sorted(window)
    for g in gammas:
        ax_w.plot([g] * len(window[g]), window[g], "o", color="grey", ms=4)
    if gammas:
        means = [sum(window[g]) / len(window[g]) for g in gammas]
        err = [[m - min(window[g]) for g, m in zip(gammas, means, strict=True)],
               [max(window[g]) - m for g, m in zip(gammas, means, strict=True)]]
        ax_w.errorbar(gammas, means, yerr=err, fmt="s-", color="black", capsize=4, label="mean, min–max")
        ax_w.legend(fontsize=8)
    ax_w.set(xlabel="γ", ylabel="ΔL̄ (training subsets)", title="ΔL̄ over 5–50 % of the steps, per seed")
    fig.suptitle(textwrap.fill(f"{caption}; lines: mean over seeds, bands: min–max", 160), fontsize=9)
    fig.tight_layout()
    return save_figure(fig, Path(out_base))


def plot_embedding_cosine(panels: dict[str, dict[str, Band]], reference: dict[str, float], out_base: Path,
                          caption: str) -> list[Path]:
    """One panel per title (γ) of source → seed band of the mean pairwise cosine over stages (x: stage labels),
    with ``reference`` (source → the paper's value early at small initialization) as dotted lines."""
    fig, axes = plt.subplots(1, len(panels), figsize=(4.5 * len(panels), 4), squeeze=False, sharey=True)
    for ax, (title, bands) in zip(axes[0], panels.items(), strict=True):
        for source, _, colour in SOURCES:
            x, mid, lo, hi = bands[source]
            pos = list(range(len(x)))
            _draw(ax, (pos, mid, lo, hi), marker="o", color=colour, label=f"{source}-only tokens")
            ax.axhline(reference[source], color=colour, ls=":", lw=1, label=f"paper, early, small init: "
                       f"{reference[source]}")
            ax.set_xticks(pos, x, rotation=45, ha="right", fontsize=7)
        ax.set_title(title, fontsize=9)
    axes[0, 0].set_ylabel("mean pairwise cosine of embeddings")
    axes[0, -1].legend(fontsize=6)
    fig.suptitle(textwrap.fill(f"{caption}; lines: mean over seeds, bands: min–max", 40 * len(panels)), fontsize=8)
    fig.tight_layout()
    return save_figure(fig, Path(out_base))
