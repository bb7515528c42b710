"""``reasonlab analyze``: named probes on a saved run. Besides the flags below, it takes the options each task
kind's probes declare (``registry.KindOption``), added as flags by ``cli.registered``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from reasonlab.cli.common import console
from reasonlab.cli.registered import given, refuse_foreign
from reasonlab.errors import UserError


def analyze(
    ctx: typer.Context,
    run_dir: Annotated[Path, typer.Argument(help="a finished run directory")],
    probe: Annotated[list[str] | None, typer.Option(
        "--probe", help="a named analysis, repeatable (default: all of the run's kind)")] = None,
    checkpoint: Annotated[str | None, typer.Option(
        help="final (the default), best (early stopping) or a saved step; not with --over-time, which analyses "
             "every saved checkpoint")] = None,
    seed: Annotated[int, typer.Option(min=0, max=2**63 - 1, help="seed of the probe inputs (other than 0: written "
                                                                 "under .../seed-<s>/ beside the default's)")] = 0,
    over_time: Annotated[bool, typer.Option("--over-time", help="run the analyses at every saved checkpoint and "
                                            "draw them across training (RUN_DIR/analysis/dynamics/)")] = False,
    every: Annotated[int | None, typer.Option(min=1, help="with --over-time: only the checkpoints whose step is a "
                                                          "multiple of this, and the last")] = None,
) -> None:
    """Run named analyses on a saved run; numbers, arrays and figures land in RUN_DIR/analysis/<checkpoint>/."""
    from reasonlab.numerics import flush_denormals
    from reasonlab.records import load_run
    from reasonlab.registry import task_kind
    from reasonlab.staging import refuse_links

    if every is not None and not over_time:
        raise UserError("--every: picks checkpoints of --over-time; add --over-time or drop --every")
    if checkpoint is not None and over_time:
        raise UserError(f"--checkpoint {checkpoint}: --over-time analyses every saved checkpoint, not one; drop "
                        "--checkpoint (or --over-time to analyse that checkpoint alone)")
    options = given(ctx)
    if options:
        kind = load_run(run_dir)[1].get("task", {}).get("kind")
        refuse_foreign(options, task_kind(kind).probe_options, f"the probes of task kind {kind!r}")
    refuse_links(run_dir)  # its checkpoints are read and its analysis written inside the run only
    with flush_denormals():
        results = _analyze(run_dir, probe or [], checkpoint or "final", {**options, "seed": seed}, over_time, every)
    for name, numbers in results.items():
        console.print(f"[bold]{escape(name)}[/]: {escape(str(numbers['headline']))}", markup=True)
    console.print(f"written under {run_dir / 'analysis'}")


def _analyze(run_dir: Path, probes: list[str], checkpoint: str, options: dict, over_time: bool,
             every: int | None) -> dict:
    """The analyses' numbers by name: at one checkpoint, or at every one (reporting the last)."""
    from reasonlab.analysis.probes import analyze as run_probes
    from reasonlab.analysis.probes import analyze_over_time

    if not over_time:
        return run_probes(run_dir, probes, checkpoint, options)
    series = analyze_over_time(run_dir, probes, options, every)
    console.print(f"{len(next(iter(series.values())))} checkpoints analysed; the last:")
    return {name: by_step[max(by_step)] for name, by_step in series.items()}
