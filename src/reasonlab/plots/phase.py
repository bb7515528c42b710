"""Phase diagrams' common parts: cell grids, axes named by the config field they sweep, and any task's label phase
diagram from plain arrays (each kind draws its own from these, in its own palette)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from reasonlab.plots import save_figure
from reasonlab.registry import task_kinds

# Sweep axes by generic config field: a short name (the report's tables and headings) and, for a figure's axis
# label, what it measures; each kind adds its own fields' (``Kind.axes``). Any other field goes by its own name
# (``train.base_lr`` -> ``base lr``).
AXES = {"init.gamma": ("γ", "initialization rate: std = d_in^-γ"), "model.depth": ("depth", "blocks"),
        "train.weight_decay": ("weight decay", ""), "train.lr_multiplier": ("peak lr / base lr", ""),
        "model.d_model": ("d_model", "")}


def _axis(field: str) -> tuple[str, str] | None:
    kinds = {f: named for kind in task_kinds().values() for f, named in kind.axes.items()}
    return AXES.get(field) or kinds.get(field)


def axis_name(field: str) -> str:
    """``init.gamma`` -> ``γ``."""
    named = _axis(field)
    return named[0] if named else field.rpartition(".")[2].replace("_", " ")


def axis_label(field: str) -> str:
    """``init.gamma`` -> ``γ (initialization rate: std = d_in^-γ)``."""
    meaning = (_axis(field) or ("", ""))[1]
    return f"{axis_name(field)} ({meaning})" if meaning else axis_name(field)


def cell_grid(cells: list, value) -> tuple[list[float], list[float], np.ndarray]:
    xs = sorted({c.x for c in cells})
    ys = sorted({c.y for c in cells})
    grid = np.full((len(ys), len(xs)), np.nan)
    for c in cells:
        v = value(c)
        grid[ys.index(c.y), xs.index(c.x)] = np.nan if v is None else v
    return xs, ys, grid


def cell_axes(ax: plt.Axes, xs: list[float], ys: list[float], xlabel: str, ylabel: str) -> None:
    ax.set_xticks(range(len(xs)), [f"{v:g}" for v in xs])
    ax.set_yticks(range(len(ys)), [f"{v:g}" for v in ys])
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)


def plot_label_phase(xs: list[float], ys: list[float], values: np.ndarray, labels: list[list[str]], out_base: Path,
                     caption: str, x: str, y: str, value_name: str) -> list[Path]:
    """Any task's phase diagram from plain arrays: a heat map of ``values`` (ys × xs, nan = no run) with each
    cell's outcome label written in it."""
    fig, ax = plt.subplots(figsize=(7, 4.4), constrained_layout=True)
    im = ax.imshow(values, origin="lower", cmap="viridis", vmin=0, vmax=1, aspect="auto")
    for (i, j), v in np.ndenumerate(values):
        if not np.isnan(v):
            ax.text(j, i, f"{labels[i][j]}\n{v:.2f}", ha="center", va="center", fontsize=7,
                    color="white" if v < 0.6 else "black")
    cell_axes(ax, xs, ys, axis_label(x), axis_label(y))
    ax.set_title(f"{value_name} and outcome (mean over seeds; the most common label)")
    fig.colorbar(im, ax=ax, label=value_name)
    fig.text(0.0, -0.02, "\n".join(textwrap.wrap(caption, 110)), ha="left", va="top", fontsize=8)
    return save_figure(fig, Path(out_base))
