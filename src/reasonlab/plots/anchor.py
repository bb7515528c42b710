"""Figures of the anchor-composition analyses (anchor spec §7): information-flow graphs, pair scatters,
fused-vector cosine maps with boxes, condensation matrices, embedding PCA and weight spectra."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import Rectangle

from reasonlab.config import Pair
from reasonlab.plots import save_figure

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
