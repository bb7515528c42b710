"""Figures of a run over time: an analysis's figure at each saved checkpoint side by side, its scalars over
training steps, and the accuracy curves with the checkpoints marked (which curves: the task kind's
``accuracy_curve``)."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import matplotlib.image as mpimg
import matplotlib.pyplot as plt

from reasonlab.plots import save_figure
from reasonlab.store import MetricRow


def plot_strip(images: list[tuple[str, Path]], out_base: Path, per_row: int = 4) -> list[Path]:
    """The PNGs in a grid, in time order, each titled (``step N``)."""
    images = [(t, p) for t, p in images if p.is_file()]
    rows = max(1, math.ceil(len(images) / per_row))
    cols = min(per_row, max(1, len(images)))
    fig, axes = plt.subplots(rows, cols, figsize=(5 * cols, 4 * rows), squeeze=False, constrained_layout=True)
    for ax in axes.flat:
        ax.axis("off")
    for ax, (title, path) in zip(axes.flat, images, strict=False):
        ax.imshow(mpimg.imread(path))
        ax.set_title(title, fontsize=10)
    return save_figure(fig, Path(out_base))


def plot_scalars_over_time(series: dict[int, dict[str, float]], name: str, out_base: Path, limit: int = 12
                           ) -> list[Path]:
    """Each scalar of an analysis against the training step (the first ``limit`` by name)."""
    keys = sorted({k for v in series.values() for k in v})[:limit]
    steps = sorted(series)
    fig, ax = plt.subplots(figsize=(8, 4.6), constrained_layout=True)
    for k in keys:
        ax.plot(steps, [series[s].get(k, math.nan) for s in steps], marker="o", ms=3, label=k)
    ax.set_xscale("log")
    ax.set_xlabel("training step (log)")
    ax.set_title(f"{name} over training", fontsize=9)
    ax.legend(fontsize=6, loc="center left", bbox_to_anchor=(1.01, 0.5))
    return save_figure(fig, Path(out_base))


Curve = Callable[[str, str], str | None]  # (split, metric) -> the curve's name, or None: not drawn


def plot_accuracy_with_checkpoints(rows: list[MetricRow], steps: list[int], out_base: Path, curve: Curve
                                   ) -> list[Path]:
    return save_figure(accuracy_figure(rows, steps, curve), Path(out_base))


def accuracy_figure(rows: list[MetricRow], steps: list[int], curve: Curve) -> plt.Figure:
    """Each metric of the run that ``curve`` names (a task kind's accuracies) over steps, with a dashed line at
    each saved checkpoint."""
    curves: dict[str, tuple[list[int], list[float]]] = {}
    for r in rows:
        name = curve(r.split, r.metric)
        if name is None:
            continue
        xs, ys = curves.setdefault(name, ([], []))
        xs.append(r.step)
        ys.append(r.value)
    fig, ax = plt.subplots(figsize=(8, 4.6), constrained_layout=True)
    for metric, (xs, ys) in sorted(curves.items()):
        ax.plot(xs, ys, label=metric, linewidth=1)
    for s in steps:
        ax.axvline(s, color="0.6", linestyle="--", linewidth=0.7)
    ax.set_xlabel("training step")
    ax.set_ylabel("accuracy")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title("accuracy per target" + ("; dashed: saved checkpoints analysed" if steps else ""), fontsize=9)
    ax.legend(fontsize=6, loc="center left", bbox_to_anchor=(1.01, 0.5))
    return fig
