"""Figures of the anchor studies' sweeps, from plain records the study aggregates: inferential complexity
(epochs to fit and test-key accuracy against k, anchor spec §7) and learning rate × weight decay (paper App. E)."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from reasonlab.plots import save_figure


def plot_complexity(per_gamma: dict[float, dict[int, tuple[float, float]]], epochs: int, out_base: Path,
                    caption: str) -> list[Path]:
    """``per_gamma``: γ → k → (mean epochs to fit, censored runs counting as ``epochs`` + 1; mean test-key
    accuracy)."""
    fig, (ax_fit, ax_test) = plt.subplots(1, 2, figsize=(11, 4.2), constrained_layout=True)
    for g, per_k in per_gamma.items():
        ks = sorted(per_k)
        ax_fit.plot(ks, [per_k[k][0] for k in ks], marker="o", label=f"γ {g:g}")
        ax_test.plot(ks, [per_k[k][1] for k in ks], marker="o", label=f"γ {g:g}")
    ax_fit.axhline(epochs + 1, color="0.6", linestyle=":", label="never fitted (censored)")
    ax_fit.set(xlabel="k (pairs with non-inferential targets)", ylabel="first epoch with training accuracy 1.0",
               title="epochs to fit")
    ax_test.set(xlabel="k", ylabel="seen pairs, test keys", title="accuracy on test keys at the end", ylim=(0, 1.02))
    for ax in (ax_fit, ax_test):
        ax.legend(fontsize=8)
    fig.suptitle(f"inferential complexity — profile: {caption}", fontsize=9)
    return save_figure(fig, Path(out_base))


def plot_lr_wd(panels: list[tuple[str, dict[tuple[float, float], float]]], base_lr: float, out_base: Path,
               caption: str) -> list[Path]:
    """One heat map per (title, cells): cells map (lr multiplier, weight decay) to a mean accuracy."""
    fig, axes = plt.subplots(1, len(panels), figsize=(5.5 * len(panels), 4.4), squeeze=False,
                             constrained_layout=True)
    for ax, (title, c) in zip(axes[0], panels, strict=True):
        lrs, wds = sorted({k[0] for k in c}), sorted({k[1] for k in c})
        grid = np.array([[c.get((lr, wd), np.nan) for lr in lrs] for wd in wds])
        im = ax.imshow(grid, origin="lower", cmap="viridis", vmin=0, vmax=1, aspect="auto")
        for (i, j), v in np.ndenumerate(grid):
            ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=8, color="white" if v < 0.6 else "black")
        ax.set_xticks(range(len(lrs)), [f"{m * base_lr:.1e}" for m in lrs])
        ax.set_yticks(range(len(wds)), [f"{w:g}" for w in wds])
        ax.set(xlabel="peak learning rate", ylabel="weight decay", title=title)
        fig.colorbar(im, ax=ax)
    fig.suptitle(f"profile: {caption}", fontsize=9)
    return save_figure(fig, Path(out_base))
