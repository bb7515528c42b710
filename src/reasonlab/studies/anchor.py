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

PROFILES = ("cpu", "cpu-regime", "cpu-wide", "paper")
# The demo: the reduced profile closest to the study's regime by the escape diagnostics, and the γ pair it
# contrasts at depth 2, large initialization then small; the bar each must reach on its target answer for the
# held-out pair to count as the study's contrast (docs/anchor-composition.md).
DEMO_PROFILE = "cpu-regime"
DEMO_GAMMAS = (0.3, 0.85)
STUDY_BAR = 0.8


def demo(out: Path, seed: int, make_executor, console: Console, overrides: list[str] = ()) -> list[Path]:
    """The demo is a sweep (``out/demo``: results table, so ``results``, ``report`` and ``phase`` work on it): the
    ``cpu-regime`` profile at depth 2 for the two demo γ values, trained side by side with the sweep's live table,
    then one figure of both beside the authors' paper-scale log and reasonlab's own shipped paper-scale runs on the
    Σlr clock (``figures/demo.png``), a table, and what the reduced profile and the paper-scale runs show and do
    not."""
    from reasonlab.plots.run import plot_run
    from reasonlab.plots.trajectory import plot_regime
    from reasonlab.studies.anchor_trajectory import (
        authors_log,
        authors_lr_sums,
        paper_scale_runs,
        paper_scale_tally,
        run_curves,
    )

    spec = SweepSpec(name="demo", study="anchor", profile=DEMO_PROFILE, set=[f"seed={seed}", *overrides],
                     grid={"init.gamma": list(DEMO_GAMMAS)})
    configs, report, rows = run_study(spec, out, make_executor, console)
    done = {r["run_id"] for r in rows}
    runs = [(c, report.sweep_dir / c.run_id()) for c in configs if c.run_id() in done]
    table = Table(title=f"anchor composition at the reduced CPU profile — runs under {report.sweep_dir}")
    pair = configs[0].task.held_out_pairs[0]  # the first held-out pair: the one each run's outcome names first
    for col in ("γ", "outcome", "seen acc", f"{pair.caption} inf", f"{pair.caption} sym", "escape Σlr (seen ≥ 0.5)",
                "inf / sym at escape", "train s", "run id"):
        table.add_column(col, overflow="fold")
    ends = {}
    for cfg, run_dir in runs:
        end = ends[cfg.init.gamma] = demo_end(read_summary(run_dir / "summary.json"), pair)
        table.add_row(str(cfg.init.gamma), end["label"], f"{end['seen']:.3f}", f"{end['inferential']:.3f}",
                      _share(end["symmetric"]), "not reached" if end["escape_lr"] is None else
                      f"{end['escape_lr']:.3g} (epoch {end['escape_epoch']})",
                      "—" if end["escape_lr"] is None else
                      f"{end['escape_inferential']:.3f} / {_share(end['escape_symmetric'])}",
                      f"{end['wall_time_s']:.0f}", run_dir.name)
        plot_run(run_dir)
    console.print(table)
    curves = {f"{c.init.gamma:g}": run_curves(d, pair) for c, d in runs}
    paper_scale = paper_scale_runs()
    figures = plot_regime(curves, authors_log(), authors_lr_sums(), report.sweep_dir / "figures" / "demo",
                          configs[0].profile, pair, paper_scale)
    console.print(f"figure: {figures[0]}", highlight=False)
    console.print(demo_verdict(ends, pair.caption), highlight=False, soft_wrap=True)
    console.print(paper_scale_verdict(paper_scale_tally(paper_scale["runs"])), highlight=False, soft_wrap=True)
    return [d for _, d in runs]


def paper_scale_verdict(tally: dict[str, tuple[int, int]]) -> str:
    """What reasonlab's own paper-scale runs (shipped, drawn in the demo's figure) show, counted from their data."""
    from reasonlab.studies.anchor_trajectory import LOGGED_OUTCOME

    parts = [f"γ {g} reached the log's {LOGGED_OUTCOME[g]} answer in {met} of {fitted} runs followed until they "
             "fitted every seen pair" for g, (met, fitted) in sorted(tally.items(), key=lambda kv: float(kv[0]))]
    return ("At paper scale on this CPU (reasonlab's own runs of the authors' logged settings, thin lines in the "
            "figure): " + "; ".join(parts) + " (docs/anchor-composition.md).")


def _share(x: float | None) -> str:
    return "—" if x is None else f"{x:.3f}"


def demo_end(summary: dict, pair) -> dict:
    """What the verdict and table need of one demo run: its label, final seen-pair accuracy and held-out answers,
    and where it first reached seen-pair 0.5 (the escape) with its held-out train-key answers there."""
    o = summary["outcome"]["pairs"][pair.key]
    at50 = (summary.get("escape") or {}).get("at50")
    held = (at50 or {}).get("heldout", {})
    return {"label": summary["label"], "seen": summary["final"]["seen_test_acc"], "inferential": o["inferential"],
            "symmetric": o["symmetric"], "wall_time_s": summary["wall_time_s"],
            "escape_lr": at50["lr_sum"] if at50 else None, "escape_epoch": at50["epoch"] if at50 else None,
            "escape_inferential": held.get(f"{pair.key}/train_keys/inferential"),
            "escape_symmetric": held.get(f"{pair.key}/train_keys/symmetric")}


def demo_verdict(ends: dict[float, dict], pair: str = "(4,3)") -> str:
    """What the demo's two runs show of the study's claim, said plainly from their numbers: the labels, the target
    shares against the study's bar, and the escape ordering (never more than the runs say)."""
    large, small = (ends.get(g) for g in DEMO_GAMMAS)
    if large is None or small is None:
        return "The demo's two runs have not both finished: nothing to compare."

    def ended(g: float, e: dict) -> str:
        return (f"γ {g} ended {e['label']} ({pair} inferential {e['inferential']:.2f}, symmetric "
                f"{_share(e['symmetric'])[:4]}, seen-pair {e['seen']:.2f})")

    text = (f"At this reduced profile {ended(DEMO_GAMMAS[0], large)} at large init and {ended(DEMO_GAMMAS[1], small)}"
            " at small init. ")
    if large["escape_lr"] is not None and small["escape_lr"] is not None:
        text += (f"The small init left its plateau (seen-pair ≥ 0.5) at Σlr {small['escape_lr']:.2f}, "
                 f"{small['escape_lr'] / large['escape_lr']:.1f}× later than the large init ({large['escape_lr']:.2f};"
                 f" both read at evaluations), answering {pair} inferential {small['escape_inferential']:.2f} / "
                 f"symmetric {_share(small['escape_symmetric'])[:4]} there")
        fell = small["escape_inferential"] - small["inferential"] > 0.05
        text += f", and its inferential share then fell to {small['inferential']:.2f} as it fitted. " if fell else ". "
    labels = large["label"] == "symmetric" and small["label"] == "inferential"
    at_bar = labels and (large["symmetric"] or 0.0) >= STUDY_BAR and small["inferential"] >= STUDY_BAR
    if at_bar:
        return text + f"The study's contrast shows, at its bar (≥ {STUDY_BAR} on each target answer)."
    if labels:
        return text + (f"The labels show the study's contrast, but below its bar of {STUDY_BAR} on the target "
                       "answers: not the study's transition (docs/anchor-composition.md).")
    return text + ("The study's contrast (small initialization composing the unseen pair) does NOT show in this "
                   "run's labels (docs/anchor-composition.md).")
