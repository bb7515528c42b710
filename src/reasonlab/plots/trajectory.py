"""The anchor study's trajectory figure: a run's evaluations beside the authors' logged paper-scale points."""

from __future__ import annotations

import textwrap
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from reasonlab.plots import save_figure  # noqa: E402

SERIES = (("seen_test_acc", "seen-pair test-key acc", "tab:gray"),
          ("heldout_inferential", "(4,3) inferential", "tab:green"),
          ("heldout_symmetric", "(4,3) symmetric", "tab:orange"))


def plot_trajectory(ours: dict[str, dict], reference: dict, out_base: Path, profile: str) -> list[Path]:
    """One column per γ: accuracies per epoch (ours: lines; the log: open markers) over the training loss per
    epoch. ``ours`` and ``reference["runs"]`` map γ (as text) to ``evaluations`` and ``train_loss`` lists."""
    gammas = sorted(set(ours) | set(reference["runs"]), key=float)
    fig, axes = plt.subplots(2, len(gammas), figsize=(6 * len(gammas), 7), squeeze=False, sharex="col",
                             constrained_layout=True)
    for col, gamma in enumerate(gammas):
        run, log = ours.get(gamma), reference["runs"].get(gamma, {})
        last = max((e["epoch"] for e in (run or {}).get("evaluations", [])), default=27)
        ax_acc, ax_loss = axes[0, col], axes[1, col]
        for key, label, colour in SERIES:
            pts = [(e["epoch"], e[key]) for e in log.get("evaluations", []) if e["epoch"] <= max(last, 27)]
            ax_acc.plot(*zip(*pts, strict=True), "o", mfc="none", color=colour, label=f"{label} (authors' log)")
            if run and (mine := [(e["epoch"], e[key]) for e in run["evaluations"] if key in e]):
                ax_acc.plot(*zip(*mine, strict=True), "-s", ms=4, color=colour, label=f"{label} (reasonlab)")
        ax_acc.set(title=f"γ {gamma}" + ("" if run else " (not trained yet)"), ylabel="accuracy", ylim=(-0.02, 1.02))
        ax_acc.legend(fontsize=7, loc="center right")
        losses = [(r["epoch"], r["loss"]) for r in log.get("train_loss", []) if r["epoch"] <= max(last, 27)]
        ax_loss.plot(*zip(*losses, strict=True), "o", mfc="none", color="black", label="authors' log")
        if run and run["train_loss"]:
            mine = [(r["epoch"], r["loss"]) for r in run["train_loss"]]
            ax_loss.plot(*zip(*mine, strict=True), "-", color="tab:blue", label="reasonlab")
        ax_loss.set(xlabel="epoch", ylabel="mean training loss", yscale="log")
        ax_loss.legend(fontsize=7)
    source = reference["source"]
    caption = (f"Profile: {profile}. Open markers: the authors' logged run ({source['repository']} at "
               f"{source['commit'][:12]}; {reference['setting']}). Accuracies: (4,3) on its train keys; symmetric = "
               "the answer of (3,4). Same settings, seed 1 in both, but not the same random draws of data, "
               "initialization and batch order.")
    fig.text(0.0, -0.01, "\n".join(textwrap.wrap(caption, 150)), ha="left", va="top", fontsize=8)
    return save_figure(fig, Path(out_base))
