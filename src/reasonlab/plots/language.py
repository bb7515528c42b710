"""Figures of the language-model half of the reasoning-bias study (PrOntoQA + TinyStories, spec §4, E2–E3), from
plain records: ΔL and the per-source training loss over steps, and the embedding cosines per stage (Fig. 7B)."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt

from reasonlab.plots import save_figure

SOURCES = (("prontoqa", "-", "tab:blue"), ("tinystories", "--", "tab:orange"))


def plot_delta_l(runs: list[tuple[str, list[tuple[int, float]], dict[str, list[tuple[int, float]]]]],
                 out_base: Path, caption: str) -> list[Path]:
    """One curve per run (label, ΔL (step, value) points, source → training-loss (step, value) points)."""
    fig, (ax_d, ax_l) = plt.subplots(1, 2, figsize=(11, 4))
    for label, delta, losses in runs:
        ax_d.plot([p[0] for p in delta], [p[1] for p in delta], label=label)
        for source, style, _ in SOURCES:
            pts = losses.get(source, [])
            ax_l.plot([p[0] for p in pts], [p[1] for p in pts], style, label=f"{source} {label}")
    ax_d.set(xlabel="step", ylabel="ΔL = (L_TS − L_PrOntoQA) / L_PrOntoQA", title="ΔL on training text")
    ax_l.set(xlabel="step", ylabel="cross-entropy per token", title="training loss per source")
    ax_d.legend(fontsize=8)
    ax_l.legend(fontsize=7)
    fig.suptitle(caption, fontsize=9)
    return save_figure(fig, Path(out_base))


def plot_embedding_cosine(panels: list[tuple[str, dict[str, dict[str, float]]]], reference: dict[str, float],
                          out_base: Path, caption: str) -> list[Path]:
    """One panel per (title, stage → source → mean pairwise cosine), with ``reference`` (source → the paper's
    value early at small initialization) as dotted lines."""
    fig, axes = plt.subplots(1, len(panels), figsize=(4 * len(panels), 3.6), squeeze=False, sharey=True)
    for ax, (title, cosine) in zip(axes[0], panels, strict=True):
        stages = list(cosine)
        for source, _, colour in SOURCES:
            ax.plot(stages, [cosine[s][source] for s in stages], marker="o", color=colour,
                    label=f"{source}-only tokens")
            ax.axhline(reference[source], color=colour, ls=":", lw=1, label=f"paper, early, small init: "
                       f"{reference[source]}")
        ax.set_title(title, fontsize=9)
        ax.tick_params(axis="x", labelsize=7)
    axes[0, 0].set_ylabel("mean pairwise cosine of embeddings")
    axes[0, -1].legend(fontsize=6)
    fig.suptitle(caption, fontsize=8)
    fig.tight_layout()
    return save_figure(fig, Path(out_base))
