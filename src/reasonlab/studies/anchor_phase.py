"""``reasonlab reproduce anchor-phase``: the study's γ × depth phase diagram (spec §4, paper Fig. 2a,b).

The ``paper`` grid is the study's full protocol (γ 0.3..0.8 × depth 2..6 × 9 peak learning rates × 3 seeds =
810 runs, meant for GPUs). The ``cpu`` grid runs the reduced CPU profile at its single learning rate over 5 γ
values × depths 2–4 × 2 seeds, and every figure and summary it writes says that it is reduced.
"""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from reasonlab.config import RunConfig
from reasonlab.kinds.anchor.cells import Cell, phase_cells
from reasonlab.kinds.anchor.config import Pair
from reasonlab.kinds.anchor.figures import plot_phase
from reasonlab.report.markdown import document, failed_runs, header, table
from reasonlab.store import atomic_write_text
from reasonlab.sweep.grid import SweepSpec
from reasonlab.sweep.runner import SweepReport, run_study

GRIDS: dict[str, dict[str, list]] = {
    "cpu": {"init.gamma": [0.3, 0.5, 0.7, 0.9, 1.1], "model.depth": [2, 3, 4], "seed": [1, 2, 3]},
    "paper": {"init.gamma": [0.3, 0.4, 0.5, 0.6, 0.7, 0.8], "model.depth": [2, 3, 4, 5, 6],
              "train.lr_multiplier": [10, 12.5, 15, 17.5, 20, 22.5, 25, 27.5, 30], "seed": [1, 2, 3]},
}


def spec_for(profile: str) -> SweepSpec:
    return SweepSpec(name=f"anchor-phase-{profile}", family="anchor", profile=profile, grid=GRIDS[profile])


def reproduce(profile: str, out: Path, make_executor, console: Console, overrides: list[str] = (),
              seeds: list[int] | None = None) -> Path:
    """Run (or finish) the grid, then write the phase figure and ``summary.md`` beside the results table."""
    configs, report, rows = run_study(spec_for(profile), out, make_executor, console, overrides, seeds)
    pair = configs[0].task.held_out_pairs[0]  # the profile's held-out pair (overrides may change it)
    cells, caption, figures = draw(configs, rows, report.sweep_dir / "figures")
    atomic_write_text(report.sweep_dir / "summary.md", summary_markdown(profile, configs[0].profile, cells, report,
                                                                          caption, pair))
    for p in figures:
        console.print(f"figure: {p}")
    console.print(f"summary: {report.sweep_dir / 'summary.md'}")
    return report.sweep_dir


def draw(configs: list[RunConfig], rows: list[dict], figures: Path) -> tuple[list[Cell], str, list[Path]]:
    """The phase cells of the finished rows, their caption, and the phase figure drawn into ``figures`` (a store's
    or a scratch folder)."""
    pair = configs[0].task.held_out_pairs[0]  # the profile's held-out pair (overrides may change it)
    cells = phase_cells(rows, pair)
    caption = (f"Profile: {configs[0].profile}. Protocol: per (γ, depth) cell and seed, the best {pair.caption} "
               "accuracy over "
               f"peak learning rates {sorted({c.train.base_lr * c.train.lr_multiplier for c in configs})}, "
               f"mean over seeds {sorted({c.seed for c in configs})}; hatched = seen-pair test-key accuracy < "
               f"{configs[0].thresholds.fit}. d_model {configs[0].model.d_model}, so std = "
               f"{configs[0].model.d_model}^-γ.")
    return cells, caption, plot_phase(cells, figures / "phase", caption, pair, fit=configs[0].thresholds.fit)


def describe_depth(cells: list[Cell], depth: float) -> str:
    """One sentence on which γ values gave which outcome at one depth, read off the cells."""
    row = sorted((c for c in cells if c.y == depth), key=lambda c: c.x)
    groups: dict[str, list[str]] = {}
    for c in row:
        groups.setdefault(c.label, []).append(f"{c.x:g}")
    return f"depth {depth:g}: " + "; ".join(f"{label} at γ {', '.join(gs)}" for label, gs in groups.items())


def summary_markdown(profile: str, profile_label: str, cells: list[Cell], report: SweepReport, caption: str,
                     pair: Pair) -> str:
    lines = [*header("anchor-phase", profile, f"{profile_label}", report.timing()),
             "![phase diagram](figures/phase.png)", "", caption, "", "## What the diagram shows", ""]
    lines += [f"- {describe_depth(cells, d)}" for d in sorted({c.y for c in cells})]
    rows = [[f"{c.x:g}", f"{c.y:g}", f"{c.inferential:.3f}", "—" if c.symmetric is None else f"{c.symmetric:.3f}",
             f"{c.seen:.3f}", c.label + (" (clean)" if c.clean else "") + (" — shadow" if c.shadow else ""),
             c.n_seeds, c.n_runs] for c in cells]
    columns = ["γ", "depth", f"{pair.caption} inferential", f"{pair.caption} symmetric", "seen-pair test acc", "label",
               "seeds", "runs"]
    return document(lines, ["", "## Cells", ""], table(columns, rows), failed_runs(report))
