"""Figures of one run, drawn by its task kind's ``run_figure``; ``metrics_figure`` (its losses and its pooled
accuracies over training) is any kind's default."""

from __future__ import annotations

import textwrap
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

from reasonlab.plots import save_figure  # noqa: E402
from reasonlab.records import load_run, run_metrics  # noqa: E402
from reasonlab.registry import task_kind  # noqa: E402
from reasonlab.store import MetricRow  # noqa: E402
from reasonlab.terminal import printable  # noqa: E402
from reasonlab.vocabulary import labelled  # noqa: E402


def plot_run(run_dir: Path) -> list[Path]:
    """Write ``figures/run.png|svg`` in the run directory and return the paths."""
    return save_figure(run_figure(run_dir), Path(run_dir) / "figures" / "run")


def run_figure(run_dir: Path) -> plt.Figure:
    """The run's figure (training loss, accuracies over training, final answer shares), not written anywhere."""
    run_dir = Path(run_dir)
    summary, cfg = load_run(run_dir)
    rows = run_metrics(run_dir)
    fig = task_kind(cfg["task"]["kind"]).run_figure(rows, summary)
    model, init = cfg.get("model", {}), cfg.get("init", {})
    shape = " ".join(f"{field}={model[field]}" for field in ("depth", "d_model") if model.get(field) is not None)
    title = (f"run {summary['run_id']} · {summary['label']} · γ={init.get('gamma')} {model.get('kind')} {shape} · "
             f"profile: {summary['profile']}")
    fig.suptitle("\n".join(textwrap.wrap(printable(title).replace("$", r"\$"), 140)), fontsize=8)  # text, not TeX
    if fig.get_layout_engine() is None:  # room for the title above the panels' own
        fig.set_layout_engine("constrained")
    for ax in fig.axes:
        if ax.get_xlabel() in ("epoch", "step"):  # whole epochs and steps, never 2.25
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    return fig


def source_curves(rows: list[MetricRow], suffix: str) -> dict[str, tuple[list[int], list[float]]]:
    """Pooled curves of one metric kind (``_acc`` or ``_loss``) by name, the suffix dropped: ``memory_acc`` and
    ``reasoning_train_acc`` give ``memory`` and ``reasoning_train``."""
    curves: dict[str, tuple[list[int], list[float]]] = {}
    for r in sorted(rows):
        if r.split == "pooled" and r.metric.endswith(suffix):
            xs, ys = curves.setdefault(r.metric.removesuffix(suffix), ([], []))
            xs.append(r.epoch)
            ys.append(r.value)
    return curves


def metrics_figure(rows: list[MetricRow], summary: dict | None = None) -> plt.Figure:
    """Any task's run figure: the training loss with each evaluation set's loss, and the pooled accuracies (the
    kind's own figures, ``train_acc``, ``test_acc``, ..., each by its label and stored name) over training."""
    losses: dict[str, tuple[list[int], list[float]]] = {}
    for r in sorted(rows):
        if r.metric == "loss" and r.split not in ("pooled", "weights"):
            xs, ys = losses.setdefault("training (epoch mean)" if r.split == "train" else r.split, ([], []))
            xs.append(r.epoch)
            ys.append(r.value)
    fig, (ax_loss, ax_acc) = plt.subplots(1, 2, figsize=(11, 4), constrained_layout=True)
    for name, (xs, ys) in sorted(losses.items()):
        ax_loss.plot(xs, ys, marker=".", label=name)
    ax_loss.set(xlabel="epoch", ylabel="cross-entropy", yscale="log", title="loss")
    kind = (summary or {}).get("config", {}).get("task", {}).get("kind")
    for name, (xs, ys) in sorted(source_curves(rows, "acc").items()):
        ax_acc.plot(xs, ys, marker=".", label=labelled(f"{name}acc", kind))
    ax_acc.set(xlabel="epoch", ylabel="accuracy", ylim=(-0.02, 1.02), title="accuracy")
    for ax in (ax_loss, ax_acc):
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=8)
    return fig


