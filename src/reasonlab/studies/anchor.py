"""The anchor-composition study: its named profiles and the small demo.

A profile is a YAML file in ``reasonlab/profiles`` named ``anchor-<profile>.yaml``; a user config is merged over
it and ``--set`` overrides over both. The ``cpu`` profile is a reduced setting (documented in
docs/anchor-composition.md) and says so in every run it produces.
"""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from rich.console import Console
from rich.table import Table

from reasonlab.config import RunConfig, apply_overrides, raw_config
from reasonlab.sweep.grid import expand

PROFILES = ("cpu", "cpu-wide", "paper")
# The γ pair the demo contrasts at depth 2 of the cpu profile: large initialization, then small.
DEMO_GAMMAS = (0.5, 1.0)


def _train_quiet(args: tuple[RunConfig, Path]) -> tuple[Path, dict]:
    """One run, quietly, through the sweep's worker function (studies do not drive the trainer themselves)."""
    from reasonlab.store import read_summary
    from reasonlab.sweep.executors import train_group

    cfg, root = args
    (outcome,) = train_group([cfg.model_dump_json()], str(root), cfg.train.threads or 1)
    if outcome.status != "finished":
        raise RuntimeError(f"run {outcome.run_id}: {outcome.error}")
    return root / cfg.run_id(), read_summary(root / cfg.run_id() / "summary.json")


def demo_configs(seed: int, threads: int, overrides: list[str] = ()) -> list[RunConfig]:
    """The demo's runs: the cpu profile at each demo γ."""
    base = raw_config(None, "cpu", list(overrides), "anchor")  # its label names the user's --set, not γ and seed
    base = apply_overrides(base, [f"seed={seed}", f"train.threads={threads}"])
    return expand(base, {"init.gamma": list(DEMO_GAMMAS)})


def demo(out: Path, seed: int, workers: int, console: Console, overrides: list[str] = (),
         dry_run: bool = False) -> list[Path]:
    """Train the cpu profile at depth 2 for the two demo γ values side by side, then print and plot them
    (``dry_run``: print the runs it would train, and train nothing)."""
    from reasonlab.plots.run import plot_run
    from reasonlab.sweep.runner import print_plan

    threads = max(1, (os.cpu_count() or 1) // max(workers, 1))
    cfgs = demo_configs(seed, threads, overrides)
    root = out / "demo"
    if dry_run:
        print_plan(console, "demo", cfgs, ["init.gamma", "model.depth", "seed"], root)
        return []
    console.print(f"training {len(cfgs)} runs of the reduced CPU profile (depth {cfgs[0].model.depth}, γ = "
                  f"{', '.join(map(str, DEMO_GAMMAS))}) with {workers} workers × {threads} threads; "
                  f"results under {root}")
    with ProcessPoolExecutor(max_workers=workers) as pool:
        results = list(pool.map(_train_quiet, [(c, root) for c in cfgs]))
    table = Table(title=f"anchor composition at the reduced CPU profile — runs under {root}")
    for col in ("γ", "outcome", "seen acc", "(4,3) inf", "(4,3) sym", "train s", "run id"):
        table.add_column(col, overflow="fold")
    figures = []
    for cfg, (run_dir, s) in zip(cfgs, results, strict=False):
        o = next(iter(s["outcome"]["pairs"].values()))
        table.add_row(str(cfg.init.gamma), s["label"], f"{s['final']['seen_test_acc']:.3f}",
                      f"{o['inferential']:.3f}", "—" if o["symmetric"] is None else f"{o['symmetric']:.3f}",
                      f"{s['wall_time_s']:.0f}", run_dir.name)
        figures += plot_run(run_dir)
    console.print(table)
    console.print("figures: " + ", ".join(str(p) for p in figures if p.suffix == ".png"))
    return [r for r, _ in results]
