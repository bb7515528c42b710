"""``reasonlab analyze``: named probes on a saved run. Its flags are the probes' options, per task kind (anchor,
modular); ``probe_options`` is the one place that maps them onto the options the probes read."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import typer
from rich.markup import escape

from reasonlab.cli.common import console, parse_pair


def probe_options(pair: str | None, key: int | None, position: int | None, threshold: float | None,
                  task: str | None, head: str | None, shot: int | None, max_tasks: int | None, ablation: str,
                  seed: int, eval_batches: int | None) -> dict:
    """The probes' options from the per-kind flags, given ones only, so each probe keeps its own defaults."""
    options = dict(pair=parse_pair(pair, "--pair"), task=parse_pair(task, "--task"), key=key, position=position,
                   threshold=threshold, head=head, shot=shot, max_tasks=max_tasks, ablation=ablation, seed=seed,
                   eval_batches=eval_batches)
    return {k: v for k, v in options.items() if v is not None}


def analyze(
    run_dir: Annotated[Path, typer.Argument(help="a finished run directory")],
    probe: Annotated[list[str] | None, typer.Option(
        "--probe", help="a named analysis, repeatable (default: all of the run's kind); anchor: flow, "
        "representations, fused, condensation, embedding, spectra; modular: shots, grid, attention, ov, pca, "
        "corruption, masking")] = None,
    checkpoint: Annotated[str, typer.Option(help="final, best (early stopping) or a saved step")] = "final",
    pair: Annotated[str | None, typer.Option(help="anchor: the probe pair a1-a2 (default: the held-out pair)")] = None,
    key: Annotated[int | None, typer.Option(min=0, help="anchor: the flow probe's key (default 99)")] = None,
    position: Annotated[int | None, typer.Option(min=0, help="anchor: key position of the probe inputs (default: "
                                                             "the middle one)")] = None,
    threshold: Annotated[float | None, typer.Option(min=-1, max=1, help="anchor: flow edge / condensation cosine "
                                                    "threshold, in [-1, 1]")] = None,
    task: Annotated[str | None, typer.Option(help="modular: the probe task a,b (default: the first i.d. task with "
                                                  "a, b ≠ 0)")] = None,
    head: Annotated[str | None, typer.Option(help="modular: PCA head LAYER.HEAD (default: the one with the most "
                                                  "variance in its top-2 plane)")] = None,
    shot: Annotated[int | None, typer.Option(min=0, help="modular: target shot of the OV/PCA probes (default: the "
                                                         "last)")] = None,
    max_tasks: Annotated[int | None, typer.Option(min=1, help="modular: tasks per group for grid/corruption")]
    = None,
    ablation: Annotated[Literal["zero", "mean"], typer.Option(help="modular head masking: zero or mean")] = "zero",
    seed: Annotated[int, typer.Option(min=0, help="seed of the probe inputs")] = 0,
    eval_batches: Annotated[int | None, typer.Option(
        min=1, help="modular shots/masking: batches per evaluation set (default: the run's own; more give "
        "last-shot accuracies over more distinct queries)")] = None,
    over_time: Annotated[bool, typer.Option("--over-time", help="run the analyses at every saved checkpoint and "
                                            "draw them across training (RUN_DIR/analysis/dynamics/)")] = False,
) -> None:
    """Run named analyses on a saved run; numbers, arrays and figures land in RUN_DIR/analysis/<checkpoint>/."""
    from reasonlab.numerics import flush_denormals

    options = probe_options(pair, key, position, threshold, task, head, shot, max_tasks, ablation, seed,
                            eval_batches)
    with flush_denormals():
        results = _analyze(run_dir, probe or [], checkpoint, options, over_time)
    for name, numbers in results.items():
        console.print(f"[bold]{escape(name)}[/]: {escape(str(numbers['headline']))}", markup=True)
    console.print(f"written under {run_dir / 'analysis'}")


def _analyze(run_dir: Path, probes: list[str], checkpoint: str, options: dict, over_time: bool) -> dict:
    """The analyses' numbers by name: at one checkpoint, or at every one (reporting the last)."""
    from reasonlab.analysis.probes import analyze as run_probes
    from reasonlab.analysis.probes import analyze_over_time

    if not over_time:
        return run_probes(run_dir, probes, checkpoint, options)
    series = analyze_over_time(run_dir, probes, options)
    console.print(f"{len(next(iter(series.values())))} checkpoints analysed; the last:")
    return {name: by_step[max(by_step)] for name, by_step in series.items()}
