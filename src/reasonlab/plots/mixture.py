"""Figures of the reasoning-bias study: per-source curves side by side (Fig. 3A/3B), anchor cosine matrices
(Fig. 4/5A) and the learned vs theoretical embedding profile (Fig. 5C–D)."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from reasonlab.plots import save_figure
from reasonlab.plots.run import source_curves
from reasonlab.store import MetricRow
from reasonlab.vocabulary import labelled

# each source's colour; its curves are named by their figures' labels and stored names (``reasonlab.vocabulary``)
SOURCE_COLOURS = {"memory": "tab:orange", "reasoning_train": "tab:blue", "reasoning_test": "tab:green"}


def plot_source_curves(runs: list[tuple[str, list[MetricRow]]], out_base: Path, caption: str) -> list[Path]:
    """One column per run (title, metrics rows): loss per source on top, accuracy per source below, each curve by
    its label and stored name."""
    fig, axes = plt.subplots(2, len(runs), figsize=(4.6 * len(runs), 6.5), squeeze=False, sharex="col")
    for col, (title, rows) in enumerate(runs):
        for row, (suffix, ylabel) in enumerate((("_loss", "cross-entropy"), ("_acc", "accuracy"))):
            ax = axes[row, col]
            for name, (xs, ys) in sorted(source_curves(rows, suffix).items()):
                ax.plot(xs, ys, color=SOURCE_COLOURS.get(name), label=labelled(name + suffix))
            ax.set(ylabel=ylabel)
            if row == 0:
                ax.set_title(title, fontsize=9)
            else:
                ax.set(xlabel="epoch", ylim=(-0.02, 1.02))
        axes[0, col].legend(fontsize=7)
    fig.text(0.0, -0.01, caption, ha="left", va="top", fontsize=8, wrap=True)
    fig.tight_layout()
    return save_figure(fig, out_base)


def plot_source_accuracy(grid: list[list[tuple[str, list[MetricRow]]]], out_base: Path, caption: str) -> list[Path]:
    """Accuracy per source of runs laid out as ``grid`` (rows of (title, metrics rows) panels, e.g. a row per γ and
    a column per seed), each curve by its label and stored name."""
    cols = max(len(row) for row in grid)
    fig, axes = plt.subplots(len(grid), cols, figsize=(4.2 * cols, 3.2 * len(grid)), squeeze=False, sharey=True)
    for r, row in enumerate(grid):
        for c in range(cols):
            ax = axes[r, c]
            if c >= len(row):
                ax.axis("off")
                continue
            title, rows = row[c]
            for name, (xs, ys) in sorted(source_curves(rows, "_acc").items()):
                ax.plot(xs, ys, color=SOURCE_COLOURS.get(name), label=labelled(name + "_acc"))
            ax.set(title=title, xlabel="epoch", ylim=(-0.02, 1.02))
            ax.title.set_fontsize(9)
        axes[r, 0].set(ylabel="accuracy")
    axes[0, 0].legend(fontsize=7)
    fig.text(0.0, -0.01, caption, ha="left", va="top", fontsize=8, wrap=True)
    fig.tight_layout()
    return save_figure(fig, out_base)


def plot_demo(runs: list[tuple[str, str, list[MetricRow]]], out_base: Path, caption: str) -> list[Path]:
    """The demo's picture: one panel per run (headline, subtitle, metrics rows), accuracy per source over epochs
    (each curve by its label and stored name), the unseen (masked) reasoning tuples drawn thick, since whether they
    are answered is the contrast."""
    fig, axes = plt.subplots(1, len(runs), figsize=(5.2 * len(runs), 4.4), squeeze=False, sharey=True)
    for ax, (headline, subtitle, rows) in zip(axes[0], runs, strict=True):
        for name, (xs, ys) in sorted(source_curves(rows, "_acc").items()):
            ax.plot(xs, ys, color=SOURCE_COLOURS.get(name), label=labelled(f"{name}_acc"),
                    lw=3.0 if name == "reasoning_test" else 1.4)
        ax.set_title(f"{headline}\n{subtitle}", fontsize=10)
        ax.set(xlabel="epoch", ylim=(-0.02, 1.02))
        ax.grid(alpha=0.3)
    axes[0, 0].set_ylabel("accuracy")
    axes[0, 0].legend(fontsize=8, loc="lower right")
    fig.text(0.0, -0.01, caption, ha="left", va="top", fontsize=8, wrap=True)
    fig.tight_layout()
    return save_figure(fig, out_base)


def plot_cosine_matrices(mats: list[tuple[str, np.ndarray]], tokens: list[int], out_base: Path) -> list[Path]:
    fig, axes = plt.subplots(1, len(mats), figsize=(4.2 * len(mats), 3.8), squeeze=False)
    for ax, (title, c) in zip(axes[0], mats, strict=True):
        im = ax.imshow(c, vmin=-1, vmax=1, cmap="RdBu_r")
        ticks = list(range(0, len(tokens), max(1, len(tokens) // 10)))
        ax.set_xticks(ticks, [str(tokens[i]) for i in ticks], fontsize=7)
        ax.set_yticks(ticks, [str(tokens[i]) for i in ticks], fontsize=7)
        ax.set_title(title, fontsize=9)
        ax.set(xlabel="anchor token", ylabel="anchor token")
    fig.colorbar(im, ax=axes[0].tolist(), label="cosine similarity of embeddings")
    return save_figure(fig, out_base)


def plot_profiles(tokens: list[int], curves: list[tuple[str, np.ndarray]], centre: int, out_base: Path) -> list[Path]:
    fig, ax = plt.subplots(figsize=(6, 4))
    for label, values in curves:
        ax.plot(tokens, values, marker=".", label=label)
    ax.set(xlabel="token s", ylabel=f"cos(w_{centre}, w_s)", title=f"embedding profile around token {centre}")
    ax.legend(fontsize=8)
    return save_figure(fig, out_base)


def plot_label_laws(runs: list[tuple[str, list[MetricRow], list[str]]], out_base: Path, caption: str) -> list[Path]:
    """Fig. 8: per memory group, accuracy (solid) and in-range rate (dashed) over epochs, one panel per run."""
    fig, axes = plt.subplots(1, len(runs), figsize=(5.5 * len(runs), 4), squeeze=False)
    for ax, (title, rows, names) in zip(axes[0], runs, strict=True):
        acc, in_range = source_curves(rows, "_acc"), source_curves(rows, "_in_range")
        for i, name in enumerate(names, start=1):
            colour = f"C{i - 1}"
            if (curve := acc.get(f"memory_group_{i}")) is not None:
                ax.plot(*curve, color=colour, label=f"{name}: accuracy")
            if (curve := in_range.get(f"memory_group_{i}")) is not None:
                ax.plot(*curve, "--", color=colour, label=f"{name}: in-range rate")
        ax.set(xlabel="epoch", ylabel="rate", ylim=(-0.02, 1.02))
        ax.set_title(title, fontsize=9)
        ax.legend(fontsize=6)
    fig.text(0.0, -0.01, caption, ha="left", va="top", fontsize=8, wrap=True)
    fig.tight_layout()
    return save_figure(fig, out_base)


def plot_pca(panels: list[tuple[str, list[int], np.ndarray, np.ndarray]], out_base: Path) -> list[Path]:
    """Embedding rows on their first two principal components, coloured by token value (Fig. 5B): an ordinal
    solution lays the tokens out in order along PC1."""
    fig, axes = plt.subplots(1, len(panels), figsize=(4.6 * len(panels), 4), squeeze=False)
    for ax, (title, tokens, scores, explained) in zip(axes[0], panels, strict=True):
        points = ax.scatter(scores[:, 0], scores[:, 1], c=tokens, cmap="viridis", s=12)
        ax.set(xlabel=f"PC1 ({explained[0]:.0%} of variance)", ylabel=f"PC2 ({explained[1]:.0%})")
        ax.set_title(title, fontsize=9)
    fig.colorbar(points, ax=axes[0].tolist(), label="token value")
    return save_figure(fig, out_base)
