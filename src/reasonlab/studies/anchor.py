"""The anchor-composition study: its named profiles and the small demo.

A profile is a YAML file in ``reasonlab/profiles`` named ``anchor-<profile>.yaml``; a user config is merged over
it and ``--set`` overrides over both. The ``cpu`` profile is a reduced setting (documented in
docs/anchor-composition.md) and says so in every run it produces.
"""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.table import Table

from reasonlab.store import read_summary
from reasonlab.sweep.grid import SweepSpec
from reasonlab.sweep.runner import run_study

PROFILES = ("cpu", "cpu-wide", "paper")
# The γ pair the demo contrasts at depth 2 of the cpu profile: large initialization, then small.
DEMO_GAMMAS = (0.5, 1.0)


def demo(out: Path, seed: int, make_executor, console: Console, overrides: list[str] = ()) -> list[Path]:
    """The demo is a sweep (``out/demo``: results table, so ``results``, ``report`` and ``phase`` work on it): the
    cpu profile at depth 2 for the two demo γ values, trained side by side with the sweep's live table, then one
    figure of both beside the authors' paper-scale log and reasonlab's own shipped paper-scale runs on the Σlr clock
    (``figures/demo.png``), a table, and what the reduced profile and the paper-scale runs show and do not."""
    from reasonlab.plots.run import plot_run
    from reasonlab.plots.trajectory import plot_regime
    from reasonlab.studies.anchor_trajectory import (
        authors_log,
        authors_lr_sums,
        paper_scale_runs,
        paper_scale_tally,
        run_curves,
    )

    spec = SweepSpec(name="demo", study="anchor", profile="cpu", set=[f"seed={seed}", *overrides],
                     grid={"init.gamma": list(DEMO_GAMMAS)})
    configs, report, rows = run_study(spec, out, make_executor, console)
    done = {r["run_id"] for r in rows}
    runs = [(c, report.sweep_dir / c.run_id()) for c in configs if c.run_id() in done]
    table = Table(title=f"anchor composition at the reduced CPU profile — runs under {report.sweep_dir}")
    pair = configs[0].task.held_out_pairs[0]  # the first held-out pair: the one each run's outcome names first
    for col in ("γ", "outcome", "seen acc", f"{pair.caption} inf", f"{pair.caption} sym", "escape Σlr (seen ≥ 0.5)",
                "train s", "run id"):
        table.add_column(col, overflow="fold")
    labels = {}
    for cfg, run_dir in runs:
        s = read_summary(run_dir / "summary.json")
        o = s["outcome"]["pairs"][pair.key]
        at50 = (s.get("escape") or {}).get("at50")
        labels[cfg.init.gamma] = s["label"]
        table.add_row(str(cfg.init.gamma), s["label"], f"{s['final']['seen_test_acc']:.3f}",
                      f"{o['inferential']:.3f}", "—" if o["symmetric"] is None else f"{o['symmetric']:.3f}",
                      "not reached" if not at50 else f"{at50['lr_sum']:.3g} (epoch {at50['epoch']})",
                      f"{s['wall_time_s']:.0f}", run_dir.name)
        plot_run(run_dir)
    console.print(table)
    curves = {f"{c.init.gamma:g}": run_curves(d, pair) for c, d in runs}
    paper_scale = paper_scale_runs()
    figures = plot_regime(curves, authors_log(), authors_lr_sums(), report.sweep_dir / "figures" / "demo",
                          configs[0].profile, pair, paper_scale)
    console.print(f"figure: {figures[0]}", highlight=False)
    console.print(demo_verdict(labels), highlight=False, soft_wrap=True)
    console.print(paper_scale_verdict(paper_scale_tally(paper_scale["runs"])), highlight=False, soft_wrap=True)
    return [d for _, d in runs]


def paper_scale_verdict(tally: dict[str, tuple[int, int]]) -> str:
    """What reasonlab's own paper-scale runs (shipped, drawn in the demo's figure) show, counted from their data."""
    from reasonlab.studies.anchor_trajectory import LOGGED_OUTCOME

    parts = [f"γ {g} reached the log's {LOGGED_OUTCOME[g]} answer in {met} of {fitted} runs followed until they "
             "fitted every seen pair" for g, (met, fitted) in sorted(tally.items(), key=lambda kv: float(kv[0]))]
    return ("At paper scale on this CPU (reasonlab's own runs of the authors' logged settings, thin lines in the "
            "figure): " + "; ".join(parts) + " (docs/anchor-composition.md).")


def demo_verdict(labels: dict[float, str]) -> str:
    """What the demo's two runs show of the study's claim, said plainly (never more than the labels say)."""
    large, small = (labels.get(g, "not trained") for g in DEMO_GAMMAS)
    shown = large == "symmetric" and small == "inferential"
    head = (f"At this reduced profile γ {DEMO_GAMMAS[0]} (large init) ended {large} and γ {DEMO_GAMMAS[1]} (small "
            f"init) ended {small}: ")
    if shown:
        return head + "the study's contrast (memorized symmetric answer at large init, composed answer at small) shows."
    return head + ("the study's contrast (small initialization composing the unseen pair) does NOT show at this "
                   "scale; the figure puts both runs beside the authors' paper-scale log, and the paper-scale "
                   "trajectory on this CPU is `reasonlab reproduce anchor-trajectory` (docs/anchor-composition.md).")
