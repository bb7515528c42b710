"""Figures of one run, drawn by its task kind's ``run_figure`` (registry): by default held-out accuracies over
training and the (prediction − inferential) histogram."""

from __future__ import annotations

import textwrap
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from reasonlab.config import Pair  # noqa: E402
from reasonlab.evaluate.set_score import histogram_bins  # noqa: E402
from reasonlab.plots import save_figure  # noqa: E402
from reasonlab.records import load_run, run_metrics  # noqa: E402
from reasonlab.registry import task_kinds  # noqa: E402
from reasonlab.store import MetricRow  # noqa: E402
from reasonlab.terminal import printable  # noqa: E402


def plot_run(run_dir: Path) -> list[Path]:
    """Write ``figures/run.png|svg`` in the run directory and return the paths."""
    return save_figure(run_figure(run_dir), Path(run_dir) / "figures" / "run")


def run_figure(run_dir: Path) -> plt.Figure:
    """The run's figure (training loss, accuracies over training, final answer shares), not written anywhere."""
    run_dir = Path(run_dir)
    summary, cfg = load_run(run_dir)
    rows = run_metrics(run_dir)
    kind = cfg.get("task", {}).get("kind", "anchor")
    entry = task_kinds().get(kind)  # a plug-in task not imported here is drawn with the default figure
    fig = (entry.get("run_figure") if entry else anchor_figure)(rows, summary)
    model, init = cfg.get("model", {}), cfg.get("init", {})
    title = (f"run {summary['run_id']} · {summary['label']} · γ={init.get('gamma')} {model.get('kind')} "
             f"depth={model.get('depth', '-')} d_model={model.get('d_model')} · profile: {summary['profile']}")
    fig.suptitle("\n".join(textwrap.wrap(printable(title).replace("$", r"\$"), 140)), fontsize=8)  # text, not TeX
    return fig


def source_curves(rows: list[MetricRow], suffix: str) -> dict[str, tuple[list[int], list[float]]]:
    """Pooled per-source curves (memory, reasoning_train, reasoning_test) of one metric kind (_acc or _loss)."""
    curves: dict[str, tuple[list[int], list[float]]] = {}
    for r in rows:
        if r.split == "pooled" and r.metric.endswith(suffix):
            xs, ys = curves.setdefault(r.metric.removesuffix(suffix), ([], []))
            xs.append(r.epoch)
            ys.append(r.value)
    return curves


def mixture_figure(rows: list[MetricRow], summary: dict | None = None) -> plt.Figure:
    fig, (ax_loss, ax_acc) = plt.subplots(1, 2, figsize=(11, 4))
    for ax, suffix, ylabel in ((ax_loss, "_loss", "cross-entropy"), (ax_acc, "_acc", "accuracy")):
        for name, (xs, ys) in sorted(source_curves(rows, suffix).items()):
            ax.plot(xs, ys, label=name.replace("_", " "))
        ax.set(xlabel="epoch", ylabel=ylabel, title=f"{ylabel} per source")
        ax.legend(fontsize=8)
    ax_acc.set_ylim(-0.02, 1.02)
    return fig


NAMES = {"train_acc": "train accuracy", "seen_test_acc": "seen pairs, test keys", "inferential": "inferential",
         "symmetric": "symmetric (the mirror pair's answer)", "any": "any defined target"}


def anchor_figure(rows: list[MetricRow], summary: dict) -> plt.Figure:
    """Training loss; accuracies over training (seen pairs, and each held-out pair on its train keys against
    each of its targets); and, per held-out pair, the final share of each (prediction − inferential) offset."""
    curves: dict[str, tuple[list[int], list[float]]] = {}
    losses: tuple[list[int], list[float]] = ([], [])
    for r in sorted(rows):
        held = Pair.of_eval_set(r.split)
        if r.split == "train" and r.metric == "loss":
            losses[0].append(r.epoch)
            losses[1].append(r.value)
        elif r.split == "pooled" or (held is not None and held[1] == "train_keys"):
            kind = r.metric.removeprefix("acc_")
            name = NAMES.get(r.metric, r.metric) if held is None else f"{held[0].caption} {NAMES.get(kind, kind)}"
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
        style = "--" if not name.startswith("(") else "-"
        ax.plot(xs, ys, style, marker=".", label=name)
    escape = summary.get("escape") or {}
    for key, style in (("at50", ":"), ("at90", "-.")):
        if (point := escape.get(key)) is None:
            continue
        lr_sum = "" if point["lr_sum"] is None else f", Σlr {point['lr_sum']:.3g}"
        ax.axvline(point["epoch"], color="gray", linestyle=style, linewidth=1,
                   label=f"seen pairs ≥ {point['level']} (epoch {point['epoch']}{lr_sum})")
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
