"""The anchor studies' figures, from plain records the studies aggregate: a run's evaluations beside the authors'
logged paper-scale points (trajectory), runs of any profile beside that log on the Σlr clock (regime), inferential
complexity (epochs to fit and test-key accuracy against k, anchor spec §7) and learning rate × weight decay (paper
App. E). Here, not in ``plots``, because they speak of anchor pairs (``Pair``), which only the studies and the
anchor kind know.
"""

from __future__ import annotations

import textwrap
from itertools import cycle
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from reasonlab.kinds.anchor.config import Pair  # noqa: E402
from reasonlab.plots import save_figure  # noqa: E402

AUTHORS_PAIR = Pair(4, 3)  # the held-out pair of the authors' logged runs (data/anchor_trajectory)
SERIES = (("seen_test_acc", "seen-pair test-key acc", "tab:gray"),
          ("heldout_inferential", f"{AUTHORS_PAIR.caption} inferential", "tab:green"),
          ("heldout_symmetric", f"{AUTHORS_PAIR.caption} symmetric", "tab:orange"))


SEED_STYLES = ("-", "--", ":", "-.", (0, (5, 1, 1, 1, 1, 1)))  # one line style per run, in name order


def plot_trajectory(ours: dict[str, dict[str, dict]], reference: dict, out_base: Path, profile: str,
                    note: str = "") -> list[Path]:
    """One column per γ: accuracies per epoch (ours: one line per run, e.g. ``seed 3``; the log: open markers) over
    the training loss per epoch. ``ours`` maps γ (as text) to a run's name to ``evaluations`` and ``train_loss``;
    ``reference["runs"]`` maps γ to the same lists of the authors' logged run; a run's optional ``marker`` sets
    its accuracy markers (a replay's apart from the runs'). Legends sit beside the axes, so no point is hidden;
    ``note`` is added to the caption (what any line not of a run is)."""
    gammas = sorted(set(ours) | set(reference["runs"]), key=float)
    fig, axes = plt.subplots(2, len(gammas), figsize=(8.5 * len(gammas), 7.5), squeeze=False, sharex="col",
                             constrained_layout=True)
    for col, gamma in enumerate(gammas):
        runs, log = sorted(ours.get(gamma, {}).items()), reference["runs"].get(gamma, {})
        last = max((e["epoch"] for _, run in runs for e in run["evaluations"]), default=27)
        ax_acc, ax_loss = axes[0, col], axes[1, col]
        for key, label, colour in SERIES:
            pts = [(e["epoch"], e[key]) for e in log.get("evaluations", []) if e["epoch"] <= max(last, 27)]
            ax_acc.plot(*zip(*pts, strict=True), "o", mfc="none", color=colour, label=f"{label} (authors' log)")
            for (name, run), style in zip(runs, cycle(SEED_STYLES), strict=False):
                if mine := [(e["epoch"], e[key]) for e in run["evaluations"] if key in e]:
                    ax_acc.plot(*zip(*mine, strict=True), linestyle=style, marker=run.get("marker", "s"), ms=4,
                                color=colour, label=f"{label} (reasonlab {name})")
        ax_acc.set(title=f"γ {gamma}" + ("" if runs else " (not trained yet)"), ylabel="accuracy", ylim=(-0.02, 1.02))
        ax_acc.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1.0))
        losses = [(r["epoch"], r["loss"]) for r in log.get("train_loss", []) if r["epoch"] <= max(last, 27)]
        ax_loss.plot(*zip(*losses, strict=True), "o", mfc="none", color="black", label="authors' log (their seed 1)")
        for (name, run), style in zip(runs, cycle(SEED_STYLES), strict=False):
            if run["train_loss"]:
                mine = [(r["epoch"], r["loss"]) for r in run["train_loss"]]
                ax_loss.plot(*zip(*mine, strict=True), linestyle=style, color="tab:blue", label=f"reasonlab {name}")
        ax_loss.set(xlabel="epoch", ylabel="mean training loss", yscale="log")
        ax_loss.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    source = reference["source"]
    caption = (f"Profile: {profile}. Open markers: the authors' logged run, their seed 1 ({source['repository']} at "
               f"{source['commit'][:12]}; {reference['setting']}). Lines: reasonlab, one style per seed; a seed is "
               "another random draw of data, initialization and batch order (reasonlab's seed 1 is not theirs). "
               f"Accuracies: {AUTHORS_PAIR.caption} on its train keys; symmetric = the answer of "
               f"{AUTHORS_PAIR.mirror.caption}." + (f" {note}" if note else ""))
    fig.text(0.0, -0.01, "\n".join(textwrap.wrap(caption, 150)), ha="left", va="top", fontsize=8)
    return save_figure(fig, Path(out_base))


REGIME_SERIES = (("seen", 0, "seen_test_acc"), ("inferential", 1, "heldout_inferential"),
                 ("symmetric", 1, "heldout_symmetric"))


def _draw_curves(axes, run: dict, looks: dict[str, dict]) -> None:
    """One run's curves on the Σlr clock (rows without ``lr_sum`` are skipped): seen-pair accuracy, the held-out
    pair's inferential and symmetric accuracy, and the training loss, each drawn with its look (plot keywords, with
    an optional ``fmt``)."""
    ev = [e for e in run["evaluations"] if "lr_sum" in e]
    drawn = [(panel, looks[series], [(e["lr_sum"], e[key]) for e in ev if e.get(key) is not None])
             for series, panel, key in REGIME_SERIES]
    drawn.append((2, looks["loss"], [(r["lr_sum"], r["loss"]) for r in run["train_loss"] if "lr_sum" in r]))
    for panel, look, points in drawn:
        if points:
            look = dict(look)
            fmt = look.pop("fmt", None)
            axes[panel].plot(*zip(*points, strict=True), *([fmt] if fmt else []), **look)


def plot_regime(ours: dict[str, dict], reference: dict, reference_lr_sums: dict[int, float], out_base: Path,
                profile: str, pair: Pair = AUTHORS_PAIR, paper_scale: dict | None = None) -> list[Path]:
    """Runs of any profile beside the authors' paper-scale log on one clock, Σlr (the learning rate summed over
    the steps so far): where each initialization leaves its plateau and what it answers for its held-out pair
    (``pair``, the log's is (4,3)) as it does. Left: seen-pair test-key accuracy; middle: the held-out pair's
    inferential (solid) and symmetric (dashed) accuracy; right: the training loss. ``ours`` maps γ to
    ``run_curves`` output (rows carry ``lr_sum``); ``paper_scale`` (``paper_scale_runs()``), when given, adds
    reasonlab's own paper-scale runs of the log's settings, thin, in the log's colour per γ."""
    fig, axes = plt.subplots(1, 3, figsize=(17, 6.4), constrained_layout=True)
    ax_seen, ax_43, ax_loss = axes
    log_colours = dict(zip(sorted(reference["runs"], key=float), ("gray", "black"), strict=False))
    for gamma, named in sorted((paper_scale or {}).get("runs", {}).items(), key=lambda kv: float(kv[0])):
        for (name, run), style in zip(sorted(named.items()), cycle(SEED_STYLES), strict=False):
            tag = f"γ {gamma} {name}" + ("" if run.get("finished") else ", unfinished")
            thin = {"linestyle": style, "ms": 3, "lw": 0.8, "color": log_colours.get(gamma, "tab:olive"), "alpha": 0.7}
            _draw_curves(axes, run, {"seen": thin | {"marker": "^", "label": f"{tag} (reasonlab, paper scale)"},
                                     "inferential": thin | {"marker": "^", "label": f"{tag} (paper scale)"},
                                     "symmetric": thin | {"marker": "v", "mfc": "none", "alpha": 0.4},
                                     "loss": thin | {"label": f"{tag} (paper scale)"}})
    for (gamma, run), c in zip(sorted(ours.items(), key=lambda kv: float(kv[0])),
                               cycle(("tab:blue", "tab:red", "tab:purple", "tab:brown")), strict=False):
        _draw_curves(axes, run, {"seen": {"fmt": "-s", "ms": 4, "color": c, "label": f"γ {gamma} (these runs)"},
                                 "inferential": {"fmt": "-s", "ms": 4, "color": c, "label": f"γ {gamma} inferential"},
                                 "symmetric": {"fmt": "--s", "ms": 4, "mfc": "none", "color": c,
                                               "label": f"γ {gamma} symmetric"},
                                 "loss": {"fmt": "-", "color": c, "label": f"γ {gamma}"}})
    for gamma, c in log_colours.items():
        log = reference["runs"][gamma]
        placed = {"evaluations": [e | {"lr_sum": reference_lr_sums[e["epoch"]]} for e in log["evaluations"]
                                  if e["epoch"] > 0 and e["epoch"] in reference_lr_sums],
                  "train_loss": [r | {"lr_sum": reference_lr_sums[r["epoch"]]} for r in log["train_loss"]
                                 if r["epoch"] in reference_lr_sums]}
        hollow = {"fmt": "o", "mfc": "none", "color": c}
        _draw_curves(axes, placed, {"seen": hollow | {"label": f"γ {gamma} (authors' log)"},
                                    "inferential": hollow | {"label": f"γ {gamma} inferential (log)"},
                                    "symmetric": {"fmt": "x", "color": c, "label": f"γ {gamma} symmetric (log)"},
                                    "loss": hollow | {"ms": 3, "label": f"γ {gamma} (authors' log)"}})
    held = pair.caption if pair == AUTHORS_PAIR else f"{pair.caption} (log: {AUTHORS_PAIR.caption})"
    for ax, title in ((ax_seen, "seen-pair test-key accuracy"), (ax_43, f"{held}: inferential / symmetric"),
                      (ax_loss, "training loss per epoch")):
        ax.set(xscale="log", xlabel="Σlr", title=title)
        ax.legend(fontsize=6, loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=2)
    ax_seen.set(ylim=(-0.02, 1.02))
    ax_43.set(ylim=(-0.02, 1.02))
    ax_loss.set(yscale="log")
    source = reference["source"]
    shipped = (" Thin lines with triangles, in the log's colour: reasonlab's own runs of the log's settings on a "
               "2-core CPU (shipped with the package; 'unfinished' = a snapshot of a run still training or stopped; "
               "middle panel: filled up-triangles inferential, open down-triangles symmetric)."
               if paper_scale else "")
    caption = (f"Σlr: the learning rate summed over the steps so far. Lines: {profile}. Markers: the authors' logged "
               f"paper-scale runs ({source['repository']} at {source['commit'][:12]}; {reference['setting']}), "
               f"placed on Σlr by their schedule.{shipped} The study's regime: the large initialization fits at a "
               f"small Σlr onto the symmetric answer (the one of {pair.mirror.caption}); the small one stays on a "
               "plateau until a much larger Σlr and composes (the inferential answer) as it leaves it.")
    fig.text(0.0, -0.01, "\n".join(textwrap.wrap(caption, 190)), ha="left", va="top", fontsize=8)
    return save_figure(fig, Path(out_base))


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
