"""Figures of the real-benchmark studies (scan, cogs, addition, prontoqa; anchor spec §8), from plain records the
study aggregates: per setting its headline accuracy and steps to converge against training size, and per category
the accuracy at the largest size."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt

from reasonlab.plots import save_figure


def plot_benchmark(settings: list[dict], sizes: list[int], head: str, per_category: dict | None, title: str,
                   out_base: Path) -> list[Path]:
    """Headline accuracy and steps to converge against training size per setting, and per-category accuracy at
    the largest size.

    ``settings``: one record per setting that has runs, in order: ``name``; ``sizes``; ``values`` (the headline,
    mean over seeds, per size); ``runs`` (``(size, headline)`` of every run, drawn as
    dots so the spread over seeds shows); ``unfit`` (the sizes none of whose runs fitted); ``converge`` and ``fit``
    (``(size, step or None)``: the first step the headline and training exact match reached fit). ``per_category``:
    ``n`` (the size), ``categories`` and ``means`` (setting → one value per category, None where no run has it),
    or None when there are no runs."""
    fig, axes = plt.subplots(1, 3, figsize=(17, 4.6), constrained_layout=True)
    for s in settings:
        value = dict(zip(s["sizes"], s["values"], strict=True))
        line, = axes[0].plot(s["sizes"], s["values"], "o-", label=s["name"])
        if len(s["runs"]) > len(s["sizes"]):
            axes[0].plot(*zip(*s["runs"], strict=True), ".", alpha=0.5, color=line.get_color())
        axes[0].plot(s["unfit"], [value[n] for n in s["unfit"]], "o", markersize=11, fillstyle="none",
                     color=line.get_color())
        for key, style, what in (("converge", "o-", head), ("fit", "s--", "train exact")):
            steps = s[key]
            axes[1].plot([n for n, v in steps if v is not None], [v for _, v in steps if v is not None], style,
                         color=line.get_color(), label=f"{s['name']}: {what} ≥ fit")
    for ax, ylabel in ((axes[0], f"{head} (final, mean over seeds; ringed: not fitted)"),
                       (axes[1], "first step reaching fit")):
        ax.set(xscale="log" if len(sizes) > 1 and sizes[-1] / sizes[0] > 4 else "linear", xlabel="training rows",
               ylabel=ylabel)
        ax.set_xticks(sizes, [str(n) for n in sizes])
        ax.minorticks_off()
        ax.legend(fontsize=7)
    axes[0].set_ylim(-0.02, 1.02)
    axes[1].set_ylim(bottom=0)
    axes[1].set_title("steps to converge (missing: never)", fontsize=9)
    if per_category is not None:
        cats, means = per_category["categories"], per_category["means"]
        width = 0.8 / len(means)
        for i, (name, values) in enumerate(means.items()):
            vals = [float("nan") if v is None else v for v in values]
            axes[2].bar([j + i * width for j in range(len(cats))], vals, width, label=name)
        axes[2].set_xticks([j + width for j in range(len(cats))], cats, rotation=75, fontsize=7)
        axes[2].set(ylim=(0, 1.02), ylabel="exact match", title=f"per category, n_train = {per_category['n']}")
    fig.suptitle(title, fontsize=9)
    return save_figure(fig, out_base)
