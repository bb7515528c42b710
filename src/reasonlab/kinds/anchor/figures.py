"""Figures of the anchor-composition task: its run figure, its phase diagram and its analyses (anchor spec §7):
information-flow graphs, pair scatters, fused-vector cosine maps with boxes, condensation matrices, embedding PCA
and weight spectra.

Layer: plots (by its file name); plots import no analysis, so the probes hand plain values in."""

from __future__ import annotations

import textwrap
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.colors import ListedColormap
from matplotlib.patches import Patch, Rectangle

from reasonlab.evaluate.set_score import histogram_bins
from reasonlab.kinds.anchor.cells import Cell
from reasonlab.kinds.anchor.config import HELDOUT, Pair
from reasonlab.plots import save_figure
from reasonlab.plots.phase import axis_label, cell_axes, cell_grid
from reasonlab.store import MetricRow
from reasonlab.vocabulary import labelled

# the outcome labels in the order the phase figure stacks them, with their colours (diverged: magenta)
PALETTE = {"inferential": "#1b9e77", "symmetric": "#d95f02", "other": "#7570b3", "not-fitted": "#bdbdbd",
           "diverged": "#e7298a"}
LABELS, LABEL_COLOURS = tuple(PALETTE), tuple(PALETTE.values())
AXES = {"task.complexity_k": ("k", "non-inferential pairs")}


def accuracy_curve(split: str, metric: str) -> str | None:
    """A held-out pair's target accuracy on its train keys on the accuracy-over-training figure, by its stored name
    (``heldout/4-3/train_keys/inferential``, as the pooled curves beside it are); None for any other non-pooled
    metric."""
    held = Pair.of_eval_set(split)
    if held is not None and held[1] == "train_keys" and metric.startswith("acc_"):
        return f"{split}/{metric.removeprefix('acc_')}"
    return None


def anchor_figure(rows: list[MetricRow], summary: dict) -> plt.Figure:
    """Training loss; accuracies over training (seen pairs, and each held-out pair on its train keys against
    each of its targets, each curve by its label and stored name); and, per held-out pair, the final share of each
    (prediction − inferential) offset."""
    curves: dict[str, tuple[list[int], list[float]]] = {}
    losses: tuple[list[int], list[float]] = ([], [])
    for r in sorted(rows):
        held = Pair.of_eval_set(r.split)
        if r.split == "train" and r.metric == "loss":
            losses[0].append(r.epoch)
            losses[1].append(r.value)
        elif r.split == "pooled" or (held is not None and held[1] == "train_keys"):
            name = r.metric if held is None else f"{r.split}/{r.metric.removeprefix('acc_')}"  # the stored name
            xs, ys = curves.setdefault(name, ([], []))
            xs.append(r.epoch)
            ys.append(r.value)
    hists = {k: v for k, v in summary.get("histograms", {}).items() if k.endswith("/train_keys")}
    fig, axes = plt.subplots(1, 2 + len(hists), figsize=(10 + 5 * len(hists), 4.2), squeeze=False,
                             constrained_layout=True)
    ax_loss, ax = axes[0, 0], axes[0, 1]
    ax_loss.plot(*losses, color="black")
    ax_loss.set(xlabel="epoch", ylabel="mean training loss", yscale="log", title="training loss")
    for name, (xs, ys) in sorted(curves.items()):
        ax.plot(xs, ys, "-" if name.startswith(HELDOUT) else "--", marker=".", label=labelled(name, "anchor"))
    escape = summary.get("escape") or {}
    for key, style in (("at50", ":"), ("at90", "-.")):
        if (point := escape.get(key)) is None:
            continue
        lr_sum = "" if point["lr_sum"] is None else f", Σlr {point['lr_sum']:.3g}"
        ax.axvline(point["epoch"], color="gray", linestyle=style, linewidth=1,
                   label=f"seen_test_acc ≥ {point['level']} (epoch {point['epoch']}{lr_sum})")
    ax.set(xlabel="epoch", ylabel="accuracy", ylim=(-0.02, 1.02), title="accuracy (held-out pairs: train keys)")
    ax.legend(fontsize=7)
    bins = histogram_bins()
    offsets = summary.get("data", {}).get("symmetric_offsets", {})
    for ax, (name, counts) in zip(axes[0, 2:], sorted(hists.items()), strict=False):
        total = sum(counts) or 1
        symmetric = str(offsets[name]) if str(offsets.get(name)) in bins else None  # a fixed offset, in range
        colours = ["tab:green" if b == "0" else "tab:orange" if b == symmetric else "tab:gray" for b in bins]
        ax.bar(range(len(counts)), [c / total for c in counts], color=colours)
        ticks = [i for i, b in enumerate(bins) if b in ("<-20", "-10", "0", symmetric, "10", ">20")]
        ax.set_xticks(ticks, [bins[i] for i in ticks])
        ax.set(xlabel="prediction − inferential target", ylabel="share of sequences", ylim=(0, 1),
               title=f"{Pair.of_eval_set(name)[0].caption} answers at the end")
        ax.text(bins.index("0"), 1.0, "inferential", color="tab:green", ha="center", va="top", fontsize=7)
        if symmetric is not None:
            ax.text(bins.index(symmetric), 0.93, "symmetric", color="tab:orange", ha="left", va="top", fontsize=7)
    return fig


ROLE_COLOURS = {"key": "#d95f02", "a1": "#1b9e77", "a2": "#7570b3"}


def plot_flow(pattern: np.ndarray, tokens: list[int], roles: dict[int, str], edges: list, threshold: float,
              title: str, out_base: Path) -> list[Path]:
    """Tokens in columns per layer (input at the left); an edge from token j of layer l to token k of layer l+1
    has width ∝ attention weight, coloured by the role of its source; the strongest edges carry their weight.
    ``edges``: records with ``layer``, ``src``, ``dst`` and ``weight`` (plain values; plots import no analysis)."""
    layers, T = pattern.shape[0], pattern.shape[-1]
    fig, ax = plt.subplots(figsize=(3.2 * (layers + 1), 0.5 * T + 1.5), constrained_layout=True)
    for layer in range(layers + 1):
        for t in range(T):
            role = roles.get(t)
            ax.scatter(layer, -t, s=160, color=ROLE_COLOURS.get(role, "0.75"), zorder=3)
            if layer == 0:
                ax.annotate(f"{tokens[t]}" + (f" ({role})" if role else ""), (layer, -t), xytext=(-12, 0),
                            textcoords="offset points", ha="right", va="center", fontsize=8)
    labelled = {(e.layer, e.src, e.dst) for e in edges[:8]}
    for e in edges:
        ax.plot([e.layer, e.layer + 1], [-e.src, -e.dst], color=ROLE_COLOURS.get(roles.get(e.src), "0.5"),
                linewidth=0.5 + 6 * e.weight, alpha=0.7, zorder=2)
        if (e.layer, e.src, e.dst) in labelled:
            ax.annotate(f"{e.weight:.2f}", ((e.layer * 0.35 + (e.layer + 1) * 0.65), -(e.src * 0.35 + e.dst * 0.65)),
                        fontsize=7, color="0.2")
    ax.set_xticks(range(layers + 1), ["input"] + [f"after layer {i + 1}" for i in range(layers)])
    ax.set_yticks([])
    ax.set_title(title, fontsize=9)
    for side in ("top", "right", "left"):
        ax.spines[side].set_visible(False)
    return save_figure(fig, Path(out_base))


def plot_pair_scatter(scores: np.ndarray, pairs: list[tuple[int, int]], title: str, out_base: Path) -> list[Path]:
    """2-D points coloured by unordered pair; filled markers for a1 ≤ a2, hollow for the mirrored order."""
    unordered = sorted({tuple(sorted(p)) for p in pairs})
    cmap = plt.get_cmap("tab20")
    fig, ax = plt.subplots(figsize=(7.5, 6), constrained_layout=True)
    of_point = [Pair.parse(p) for p in pairs]  # not "ab" strings: anchors 1,12 and 11,2 would both read "112"
    for i, (a, b) in enumerate(unordered):
        colour = cmap(i % 20)
        for order, pair in enumerate((Pair(a, b), Pair(b, a)) if a != b else (Pair(a, b),)):
            mask = np.array([p == pair for p in of_point], dtype=bool)
            ax.scatter(scores[mask, 0], scores[mask, 1], s=8, label=pair.caption,
                       facecolors=colour if order == 0 else "none", edgecolors=colour)
    ax.set_xlabel("PC 1")
    ax.set_ylabel("PC 2")
    ax.legend(fontsize=6, ncol=2, markerscale=2, loc="center left", bbox_to_anchor=(1.01, 0.5))
    ax.set_title(title, fontsize=9)
    return save_figure(fig, Path(out_base))


def plot_fused(panels: list[tuple[str, np.ndarray, np.ndarray]], keys: list[int], out_base: Path) -> list[Path]:
    fig, axes = plt.subplots(1, len(panels), figsize=(5.2 * len(panels), 4.6), squeeze=False,
                             constrained_layout=True)
    for ax, (title, cos, boxes) in zip(axes[0], panels, strict=True):
        im = ax.imshow(cos, cmap="RdBu_r", vmin=-1, vmax=1, origin="lower")
        for i, j in zip(*np.nonzero(boxes), strict=True):
            ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="black", linewidth=1.4))
        ax.set_xticks(range(len(keys)), keys, fontsize=7, rotation=90)
        ax.set_yticks(range(len(keys)), keys, fontsize=7)
        ax.set_xlabel("key x2")
        ax.set_ylabel("key x1")
        ax.set_title(f"{title}\nboxes: equal inferential targets", fontsize=8)
        fig.colorbar(im, ax=ax, shrink=0.8)
    return save_figure(fig, Path(out_base))


def plot_condensation(panels: list[tuple[str, np.ndarray]], out_base: Path) -> list[Path]:
    fig, axes = plt.subplots(1, len(panels), figsize=(5.2 * len(panels), 4.6), squeeze=False,
                             constrained_layout=True)
    for ax, (title, cos) in zip(axes[0], panels, strict=True):
        im = ax.imshow(cos, cmap="RdBu_r", vmin=-1, vmax=1)
        ax.set_title(f"{title}\n(rows grouped by cos > threshold, largest group first)", fontsize=8)
        ax.set_xticks([])
        ax.set_yticks([])
        fig.colorbar(im, ax=ax, shrink=0.8)
    return save_figure(fig, Path(out_base))


def plot_embedding(scores: np.ndarray, values: list[int], title: str, out_base: Path) -> list[Path]:
    fig, ax = plt.subplots(figsize=(7, 5.6), constrained_layout=True)
    sc = ax.scatter(scores[:, 0], scores[:, 1], c=values, cmap="viridis", s=16)
    for v, (x, y) in zip(values, scores, strict=True):
        if v % 5 == 0:
            ax.annotate(str(v), (x, y), fontsize=6)
    fig.colorbar(sc, ax=ax, label="token value")
    ax.set_xlabel("PC 1")
    ax.set_ylabel("PC 2")
    ax.set_title(title, fontsize=9)
    return save_figure(fig, Path(out_base))


def plot_spectra(singular: dict[str, np.ndarray], eigen: np.ndarray, out_base: Path) -> list[Path]:
    fig, (ax_s, ax_e) = plt.subplots(1, 2, figsize=(12, 4.4), constrained_layout=True)
    for name, s in singular.items():
        ax_s.semilogy(range(1, len(s) + 1), s, label=name, linewidth=1)
    ax_s.set_xlabel("index")
    ax_s.set_ylabel("singular value")
    ax_s.set_title("singular values of every weight matrix", fontsize=9)
    ax_s.legend(fontsize=6, ncol=2)
    ax_e.semilogy(range(1, len(eigen) + 1), np.maximum(eigen, 1e-12), marker="o", ms=2)
    ax_e.set_xlabel("index")
    ax_e.set_ylabel("eigenvalue")
    ax_e.set_title("covariance eigenvalues of the item/target embeddings", fontsize=9)
    return save_figure(fig, Path(out_base))


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
        xs, ys, grid = cell_grid(cells, value)
        im = ax.imshow(grid, origin="lower", cmap="viridis", vmin=0, vmax=1, aspect="auto")
        for c in cells:
            v, r = value(c), spread(c)
            if v is None or np.isnan(v):
                continue
            text = f"{v:.2f}" + (f"\n({r[0]:.2f}–{r[1]:.2f})" if r and c.n_seeds > 1 else "")
            ax.text(xs.index(c.x), ys.index(c.y), text, ha="center", va="center", fontsize=7,
                    color="white" if v < 0.6 else "black")
        _hatch(ax, cells, xs, ys)
        cell_axes(ax, xs, ys, xlabel, ylabel)
        ax.set_title(title)
        fig.colorbar(im, ax=ax, label="accuracy (mean over seeds; see caption)")
    xs, ys, grid = cell_grid(cells, lambda c: LABELS.index(c.label))
    axes[2].imshow(grid, origin="lower", cmap=ListedColormap(LABEL_COLOURS), vmin=-0.5, vmax=len(LABELS) - 0.5,
                   aspect="auto")
    for c in cells:
        text = c.label + (" ✓" if c.clean else "") + (f"\n{c.n_diverged} diverged" if c.n_diverged
                                                       and c.label != "diverged" else "")
        axes[2].text(xs.index(c.x), ys.index(c.y), text, ha="center", va="center", fontsize=7)
    _hatch(axes[2], cells, xs, ys)
    cell_axes(axes[2], xs, ys, xlabel, ylabel)
    axes[2].set_title(f"{pair} outcome")
    handles = [Patch(facecolor=col, label=lab) for lab, col in zip(LABELS, LABEL_COLOURS, strict=True)]
    handles.append(Patch(facecolor="white", edgecolor="black", hatch="///",
                         label=f"shadow: seen-pair test acc < {fit:g}"))
    axes[2].legend(handles=handles, loc="upper left", bbox_to_anchor=(1.02, 1), fontsize=8, frameon=False)
    fig.text(0.0, -0.02, "\n".join(textwrap.wrap(caption, 180)), ha="left", va="top", fontsize=8)
    return save_figure(fig, Path(out_base))
