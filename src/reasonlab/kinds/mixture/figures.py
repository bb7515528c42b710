"""The reasoning-bias mixture's run figure: loss and accuracy per source (memory, reasoning train and test keys).

Layer: plots (by its file name).
"""

from __future__ import annotations

import matplotlib.pyplot as plt

from reasonlab.plots.mixture import SOURCE_COLOURS
from reasonlab.plots.run import source_curves
from reasonlab.store import MetricRow
from reasonlab.vocabulary import labelled

# a run's labels, in the colours of the anchor labels they resemble (the rule inferred; a table memorized)
PALETTE = {"reasoning": "#1b9e77", "memorizing": "#d95f02"}


def mixture_figure(rows: list[MetricRow], summary: dict | None = None) -> plt.Figure:
    """Loss and accuracy per source over epochs, each curve by its label and stored name, in its source's colour
    (the demo's and the study's figures use the same)."""
    fig, (ax_loss, ax_acc) = plt.subplots(1, 2, figsize=(11, 4))
    for ax, suffix, ylabel in ((ax_loss, "_loss", "cross-entropy"), (ax_acc, "_acc", "accuracy")):
        for name, (xs, ys) in sorted(source_curves(rows, suffix).items()):
            ax.plot(xs, ys, color=SOURCE_COLOURS.get(name), label=labelled(name + suffix, "mixture"))
        ax.set(xlabel="epoch", ylabel=ylabel, title=f"{ylabel} per source")
        ax.legend(fontsize=8)
    ax_acc.set_ylim(-0.02, 1.02)
    return fig
