"""Phase diagrams: heat maps of inferential and symmetric accuracy and of the outcome label, shadowed cells
hatched, the real axis values on the ticks and the profile in the caption."""

from __future__ import annotations

import textwrap
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.colors import ListedColormap
from matplotlib.patches import Patch, Rectangle

from reasonlab.config import Pair
from reasonlab.evaluate.modular import ModularCell
from reasonlab.evaluate.phase import Cell
from reasonlab.plots import save_figure

LABELS = ("inferential", "symmetric", "other", "not-fitted", "diverged")
# Sweep axes by config field: a short name (the report's tables and headings) and, for a figure's axis label, what
# it measures. Any other field goes by its own name (``train.base_lr`` -> ``base lr``).
AXES = {"init.gamma": ("γ", "initialization rate: std = d_in^-γ"), "model.depth": ("depth", "blocks"),
        "train.weight_decay": ("weight decay", ""), "train.lr_multiplier": ("peak lr / base lr", ""),
        "model.d_model": ("d_model", ""), "task.n_tasks": ("n_id", "pre-training tasks"),
        "task.alpha": ("α", "fraction of input pairs seen"), "task.complexity_k": ("k", "non-inferential pairs"),
        "task.n_train": ("training rows", "")}
PHASES = ("id-memorization", "id-generalization", "ood-memorization", "ood-generalization", "unfit", "diverged")
PHASE_COLOURS = ("#fdae61", "#abd9e9", "#d7191c", "#2c7bb6", "#bdbdbd", "#e7298a")
LABEL_COLOURS = ("#1b9e77", "#d95f02", "#7570b3", "#bdbdbd", "#e7298a")  # diverged: magenta


def axis_name(field: str) -> str:
    """``init.gamma`` -> ``γ``."""
    return AXES[field][0] if field in AXES else field.rpartition(".")[2].replace("_", " ")


def axis_label(field: str) -> str:
    """``init.gamma`` -> ``γ (initialization rate: std = d_in^-γ)``."""
    meaning = AXES.get(field, ("", ""))[1]
    return f"{axis_name(field)} ({meaning})" if meaning else axis_name(field)


def _grid(cells: list[Cell], value) -> tuple[list[float], list[float], np.ndarray]:
    xs = sorted({c.x for c in cells})
    ys = sorted({c.y for c in cells})
    grid = np.full((len(ys), len(xs)), np.nan)
    for c in cells:
        v = value(c)
        grid[ys.index(c.y), xs.index(c.x)] = np.nan if v is None else v
    return xs, ys, grid


def _axes(ax: plt.Axes, xs: list[float], ys: list[float], xlabel: str, ylabel: str) -> None:
    ax.set_xticks(range(len(xs)), [f"{v:g}" for v in xs])
    ax.set_yticks(range(len(ys)), [f"{v:g}" for v in ys])
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)


def _hatch(ax: plt.Axes, cells: list[Cell], xs: list[float], ys: list[float]) -> None:
    for c in cells:
        if c.shadow:
            ax.add_patch(Rectangle((xs.index(c.x) - 0.5, ys.index(c.y) - 0.5), 1, 1, fill=False, hatch="///",
                                   edgecolor="0.45", linewidth=0))


def plot_phase(cells: list[Cell], out_base: Path, caption: str, pair: Pair | str, x: str = "init.gamma",
               y: str = "model.depth", fit: float = 0.9) -> list[Path]:
    """Three panels side by side, titled by the held-out ``pair`` the cells read; writes ``out_base.png|svg``."""
    xlabel, ylabel = axis_label(x), axis_label(y)
    pair = Pair.parse(pair).caption
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.4), constrained_layout=True)
    panels = ((f"{pair} inferential accuracy", lambda c: c.inferential, lambda c: c.inferential_range),
              (f"{pair} symmetric accuracy", lambda c: c.symmetric, lambda c: c.symmetric_range))
    for ax, (title, value, spread) in zip(axes[:2], panels, strict=True):
        xs, ys, grid = _grid(cells, value)
        im = ax.imshow(grid, origin="lower", cmap="viridis", vmin=0, vmax=1, aspect="auto")
        for c in cells:
            v, r = value(c), spread(c)
            if v is None or np.isnan(v):
                continue
            text = f"{v:.2f}" + (f"\n({r[0]:.2f}–{r[1]:.2f})" if r and c.n_seeds > 1 else "")
            ax.text(xs.index(c.x), ys.index(c.y), text, ha="center", va="center", fontsize=7,
                    color="white" if v < 0.6 else "black")
        _hatch(ax, cells, xs, ys)
        _axes(ax, xs, ys, xlabel, ylabel)
        ax.set_title(title)
        fig.colorbar(im, ax=ax, label="accuracy (mean over seeds; see caption)")
    xs, ys, grid = _grid(cells, lambda c: LABELS.index(c.label))
    axes[2].imshow(grid, origin="lower", cmap=ListedColormap(LABEL_COLOURS), vmin=-0.5, vmax=len(LABELS) - 0.5,
                   aspect="auto")
    for c in cells:
        text = c.label + (" ✓" if c.clean else "") + (f"\n{c.n_diverged} diverged" if c.n_diverged
                                                       and c.label != "diverged" else "")
        axes[2].text(xs.index(c.x), ys.index(c.y), text, ha="center", va="center", fontsize=7)
    _hatch(axes[2], cells, xs, ys)
    _axes(axes[2], xs, ys, xlabel, ylabel)
    axes[2].set_title(f"{pair} outcome")
    handles = [Patch(facecolor=col, label=lab) for lab, col in zip(LABELS, LABEL_COLOURS, strict=True)]
    handles.append(Patch(facecolor="white", edgecolor="black", hatch="///",
                         label=f"shadow: seen-pair test acc < {fit:g}"))
    axes[2].legend(handles=handles, loc="upper left", bbox_to_anchor=(1.02, 1), fontsize=8, frameon=False)
    fig.text(0.0, -0.02, "\n".join(textwrap.wrap(caption, 180)), ha="left", va="top", fontsize=8)
    return save_figure(fig, Path(out_base))


def plot_modular_phase(cells: list[ModularCell], out_base: Path, caption: str, x: str = "task.n_tasks",
                       y: str = "task.alpha") -> list[Path]:
    """Two panels: o.o.d.-test last-shot accuracy and the phase (``*`` = atypical signature)."""
    xlabel, ylabel = axis_label(x), axis_label(y)
    fig, (ax_acc, ax_lab) = plt.subplots(1, 2, figsize=(12, 4.4), constrained_layout=True)
    xs, ys, grid = _grid(cells, lambda c: c.last_shot["ood_test"])
    im = ax_acc.imshow(grid, origin="lower", cmap="viridis", vmin=0, vmax=1, aspect="auto")
    for (i, j), v in np.ndenumerate(grid):
        if not np.isnan(v):
            ax_acc.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=8, color="white" if v < 0.6 else "black")
    _axes(ax_acc, xs, ys, xlabel, ylabel)
    ax_acc.set_title("o.o.d. tasks, test pairs: last-shot accuracy")
    fig.colorbar(im, ax=ax_acc, label="accuracy (mean over seeds)")
    xs, ys, grid = _grid(cells, lambda c: PHASES.index(c.label))
    ax_lab.imshow(grid, origin="lower", cmap=ListedColormap(PHASE_COLOURS), vmin=-0.5, vmax=len(PHASES) - 0.5,
                  aspect="auto")
    for c in cells:
        short = "".join(w[0].upper() for w in c.label.split("-")) if c.label not in ("unfit", "diverged") \
            else c.label
        ax_lab.text(xs.index(c.x), ys.index(c.y), short + ("*" if c.atypical else ""), ha="center", va="center",
                    fontsize=8)
    _axes(ax_lab, xs, ys, xlabel, ylabel)
    ax_lab.set_title("phase (last-shot; * = atypical signature)")
    handles = [Patch(facecolor=col, label=lab) for lab, col in zip(PHASES, PHASE_COLOURS, strict=True)]
    ax_lab.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.02, 1), fontsize=8, frameon=False)
    fig.text(0.0, -0.02, "\n".join(textwrap.wrap(caption, 150)), ha="left", va="top", fontsize=8)
    return save_figure(fig, Path(out_base))


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
    _axes(ax, xs, ys, axis_label(x), axis_label(y))
    ax.set_title(f"{value_name} and outcome (mean over seeds; the most common label)")
    fig.colorbar(im, ax=ax, label=value_name)
    fig.text(0.0, -0.02, "\n".join(textwrap.wrap(caption, 110)), ha="left", va="top", fontsize=8)
    return save_figure(fig, Path(out_base))
