"""The parity figures: a run's loss and accuracies (seen against held-out strings, against chance), and the
``flips`` probe's answer-flip rates.

Layer: plots (by its file name).
"""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt

from reasonlab.plots import save_figure
from reasonlab.store import MetricRow

# Readable names of the kind's figures (the report's tables).
WORDS = {"seen_acc": "seen bit strings: accuracy", "held_out_acc": "held-out bit strings: accuracy"}
SETS = {"seen": "seen strings", "held_out": "held-out strings"}


def run_figure(rows: list[MetricRow], summary: dict) -> plt.Figure:
    """The training loss beside each set's, and the accuracy on seen and held-out strings against chance (½):
    a run that memorized stays near chance on the held-out strings."""
    curves: dict[tuple[str, str], tuple[list[int], list[float]]] = {}
    for r in sorted(rows):
        if r.metric == "loss" and r.split in ("train", *SETS) or r.split == "pooled" and r.metric in WORDS:
            xs, ys = curves.setdefault((r.split, r.metric), ([], []))
            xs.append(r.epoch)
            ys.append(r.value)
    fig, (ax_loss, ax_acc) = plt.subplots(1, 2, figsize=(11, 4), constrained_layout=True)
    for split, name in (("train", "training"), *SETS.items()):
        ax_loss.plot(*curves.get((split, "loss"), ([], [])), marker=".", label=name)
    ax_loss.set(xlabel="epoch", ylabel="cross-entropy", title="parity: loss")
    for split, name in SETS.items():
        ax_acc.plot(*curves.get(("pooled", f"{split}_acc"), ([], [])), marker=".", label=name)
    ax_acc.axhline(0.5, color="grey", linestyle=":", label="chance")
    ax_acc.set(xlabel="epoch", ylabel="parity accuracy", ylim=(-0.02, 1.02), title="parity: seen vs held-out strings")
    for ax in (ax_loss, ax_acc):
        ax.legend(fontsize=8)
    return fig


def plot_flips(rates: dict[str, float], bit: int, out_base: Path) -> list[Path]:
    """The share of strings whose answer flips with bit ``bit``, per set; the rule flips every one."""
    fig, ax = plt.subplots(figsize=(5, 3.5), constrained_layout=True)
    ax.bar([SETS[k] for k in rates], list(rates.values()), color=["#1b9e77", "#d95f02"][: len(rates)])
    ax.axhline(1.0, color="black", linestyle="--", linewidth=0.8, label="the parity rule")
    ax.set(ylim=(0, 1.05), ylabel="answers flipped", title=f"flipping bit {bit}")
    ax.legend(fontsize=8)
    return save_figure(fig, out_base)
