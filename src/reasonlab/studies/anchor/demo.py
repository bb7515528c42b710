"""The anchor-composition study's named profiles and its two demos: ``reasonlab demo anchor``, the phase study's
``demo`` arm (the study in small), and ``reasonlab demo trajectory``, the trajectory study's (its paper-scale runs
drawn from the data shipped with the package, training nothing).

A profile is a YAML file of the anchor kind, ``kinds/anchor/profiles/anchor-<profile>.yaml``; a user config is
merged over it and ``--set`` overrides over both. The ``cpu`` profile is a reduced setting (documented in
docs/anchor-composition.md) and says so in every run it produces.
"""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.table import Table

from reasonlab.kinds.anchor.config import Pair
from reasonlab.records import read_summary
from reasonlab.studies.anchor import STUDY_BAR
from reasonlab.studies.base import Arm, Demo
from reasonlab.sweep.grid import SweepSpec
from reasonlab.sweep.runner import run_study
from reasonlab.terminal import counted

PROFILES = ("cpu", "cpu-regime", "cpu-wide", "paper")
# The demo: the reduced profile closest to the study's regime by the escape diagnostics, and the γ pair it
# contrasts at depth 2, large initialization then small; each must reach the study's bar (``STUDY_BAR``) on its
# target answer for the held-out pair to count as the study's contrast (docs/anchor-composition.md).
DEMO_GAMMAS = (0.3, 0.85)
SWEEP = "demo-anchor"  # the demo's sweep folder under the store
# its cost: the committed seeds 2 and 3 (results/demo-anchor/), each run's wall time summed per seed
ARM = Arm(profile="cpu-regime", grid={"init.gamma": list(DEMO_GAMMAS)},
          demo=Demo("anchor", "the anchor study in small (about 15 minutes)"),
          cost="2 runs of 5,187 steps: 0.5–1.0 CPU-hours a seed on an AMD EPYC, 1 thread a run")
FELL = 0.05  # a drop of the inferential share from the escape to the end larger than evaluation noise on 1,000 rows


def demo_spec(seed: int, overrides: list[str] = ()) -> SweepSpec:
    """The demo's sweep at one seed: its runs are the ones the docs table per seed (their ids pin them)."""
    return SweepSpec(name=SWEEP, family="anchor", profile=ARM.profile, set=[f"seed={seed}", *overrides],
                     grid=ARM.grid)


def demo(out: Path, seed: int, make_executor, console: Console, overrides: list[str] = ()) -> list[Path]:
    """``reasonlab demo anchor``, a sweep (``out/demo-anchor``: results table, so ``results``, ``report`` and
    ``phase`` work on it): the ``cpu-regime`` profile at depth 2 for the two demo γ values, trained side by side
    with the sweep's live table, then one figure of both beside the authors' paper-scale log and reasonlab's own
    shipped paper-scale runs on the Σlr clock (``figures/demo.png``), a table, and what the reduced profile and the
    paper-scale runs show and do not."""
    from reasonlab.plots.run import plot_run
    from reasonlab.studies.anchor.figures import plot_regime
    from reasonlab.studies.anchor.trajectory import (
        authors_log,
        authors_lr_sums,
        paper_scale_runs,
        paper_scale_tally,
        run_curves,
    )

    configs, report, rows = run_study(demo_spec(seed, overrides), out, make_executor, console)
    done = {r["run_id"] for r in rows}
    runs = [(c, report.sweep_dir / c.run_id()) for c in configs if c.run_id() in done]
    table = Table(title=f"anchor composition at the reduced CPU profile — runs under {report.sweep_dir}")
    pair = configs[0].task.held_out_pairs[0]  # the first held-out pair: the one each run's outcome names first
    for col in ("γ", "outcome", "seen acc", f"{pair.caption} inf", f"{pair.caption} sym", "escape (seen ≥ 0.5)",
                "inf / sym at escape", "train s", "run id"):
        table.add_column(col, overflow="fold")
    ends = {}
    for cfg, run_dir in runs:
        end = ends[cfg.init.gamma] = demo_end(read_summary(run_dir / "summary.json"), pair)
        table.add_row(str(cfg.init.gamma), end["label"], _share(end["seen"]), _share(end["inferential"]),
                      _share(end["symmetric"]), _escape_cell(end),
                      f"{_share(end['escape_inferential'])} / {_share(end['escape_symmetric'])}" if end["escaped"]
                      else "—", _share(end["wall_time_s"], 0), run_dir.name)
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


def trajectory(out: Path, console: Console) -> list[Path]:
    """``reasonlab demo trajectory``: the anchor study's paper-scale picture without training — the authors' logged
    runs and reasonlab's own paper-scale runs of their settings on a 2-core CPU (both shipped with the package), on
    the Σlr clock (``out/demo-trajectory/trajectory.png``) — and what those runs show; returns the figures."""
    from reasonlab.studies.anchor.figures import AUTHORS_PAIR, plot_regime  # matplotlib: only when drawing
    from reasonlab.studies.anchor.trajectory import authors_log, authors_lr_sums, paper_scale_runs, paper_scale_tally

    paper_scale = paper_scale_runs()
    figures = plot_regime({}, authors_log(), authors_lr_sums(), Path(out) / "demo-trajectory" / "trajectory",
                          "no reduced-profile runs (nothing trained here)", AUTHORS_PAIR, paper_scale)
    console.print(f"figure: {figures[0]}", highlight=False)
    console.print(paper_scale_verdict(paper_scale_tally(paper_scale["runs"])), highlight=False)  # wrapped to width
    return figures


def paper_scale_verdict(tally: dict[str, tuple[int, int, int]]) -> str:
    """What reasonlab's own paper-scale runs (shipped, drawn in the demo's figure) show, counted from their data."""
    from reasonlab.studies.anchor.trajectory import LOGGED_OUTCOME  # here: it draws figures (matplotlib)

    parts = [f"γ {g} reached the log's {LOGGED_OUTCOME[g]} answer in {met} of {counted(fitted, 'run')} ({seeds} seed"
             f"{'s' if seeds != 1 else ''})" for g, (met, fitted, seeds) in sorted(tally.items(),
                                                                                  key=lambda kv: float(kv[0]))]
    return ("At paper scale on this CPU (reasonlab's own runs of the authors' logged settings, thin lines in the "
            "figure; counting runs followed until they fitted every seen pair, a seed trained again on another "
            "machine as a run of its own): " + "; ".join(parts) + " (docs/anchor-composition.md).")


def _share(x: float | None, digits: int = 3) -> str:
    return "—" if x is None else f"{x:.{digits}f}"


def demo_end(summary: dict, pair: Pair) -> dict:
    """What the verdict and table need of one demo run: its label, final seen-pair accuracy and held-out answers,
    and where it first reached seen-pair 0.5 (the escape) with its held-out train-key answers there. Figures a
    run does not have (a diverged run has no outcome; a run that never escaped has no escape) are None."""
    o = (summary.get("outcome") or {}).get("pairs", {}).get(pair.key) or {}
    at50 = (summary.get("escape") or {}).get("at50")
    held = (at50 or {}).get("heldout", {})
    return {"label": summary["label"], "seen": (summary.get("final") or {}).get("seen_test_acc"),
            "inferential": o.get("inferential"), "symmetric": o.get("symmetric"),
            "wall_time_s": summary.get("wall_time_s"), "escaped": at50 is not None,
            "escape_lr": (at50 or {}).get("lr_sum"), "escape_epoch": (at50 or {}).get("epoch"),
            "escape_inferential": held.get(f"{pair.key}/train_keys/inferential"),
            "escape_symmetric": held.get(f"{pair.key}/train_keys/symmetric")}


def _escape_cell(end: dict) -> str:
    if not end["escaped"]:
        return "not reached"
    return f"epoch {end['escape_epoch']}" + ("" if end["escape_lr"] is None else f", Σlr {end['escape_lr']:.3g}")


def demo_verdict(ends: dict[float, dict], pair: str = "(4,3)") -> str:
    """What the demo's two runs show of the study's claim, said plainly from their numbers: the labels, the target
    shares against the study's bar, and the escape ordering (never more than the runs say)."""
    large, small = (ends.get(g) for g in DEMO_GAMMAS)
    if large is None or small is None:
        return "The demo's two runs have not both finished: nothing to compare."

    def ended(g: float, e: dict) -> str:
        return (f"γ {g} ended {e['label']} ({pair} inferential {_share(e['inferential'], 2)}, symmetric "
                f"{_share(e['symmetric'], 2)}, seen-pair {_share(e['seen'], 2)})")

    text = (f"At this reduced profile {ended(DEMO_GAMMAS[0], large)} at large init and {ended(DEMO_GAMMAS[1], small)}"
            " at small init. ")
    if large["escape_lr"] and small["escape_lr"] is not None:
        ratio = small["escape_lr"] / large["escape_lr"]
        order = f"{ratio:.1f}× later than" if ratio >= 1 else f"{1 / ratio:.1f}× earlier than"
        text += (f"The small init left its plateau (seen-pair ≥ 0.5) at Σlr {small['escape_lr']:.2f}, {order} the "
                 f"large init ({large['escape_lr']:.2f}; both as read at the evaluations, between which the crossings "
                 f"lie), answering {pair} inferential {_share(small['escape_inferential'], 2)} / symmetric "
                 f"{_share(small['escape_symmetric'], 2)} there")
        at, end = small["escape_inferential"], small["inferential"]
        fell = at is not None and end is not None and at - end > FELL
        text += f", and its inferential share then fell to {end:.2f} as it fitted. " if fell else ". "
    labels = large["label"] == "symmetric" and small["label"] == "inferential"
    if labels and (large["symmetric"] or 0.0) >= STUDY_BAR and (small["inferential"] or 0.0) >= STUDY_BAR:
        return text + f"The study's contrast shows, at its bar (≥ {STUDY_BAR} on each target answer)."
    if labels:
        return text + (f"The labels show the study's contrast, but below its bar of {STUDY_BAR} on the target "
                       "answers: not the study's transition (docs/anchor-composition.md).")
    return text + ("The study's contrast (small initialization composing the unseen pair) does NOT show in this "
                   "run's labels (docs/anchor-composition.md).")
