"""The studies' reduced sweeps (committed under results/<study>-<profile>/): their figures, reports and headlines."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from pathlib import Path

from docgen.common import REPO, Table, train_pack
from reasonlab.config import RunConfig
from reasonlab.report.markdown import held_in
from reasonlab.studies import (
    anchor_complexity,
    anchor_lr_wd,
    anchor_phase,
    benchmarks,
    modular_phase,
)
from reasonlab.studies.benchmarks.docs import committed
from reasonlab.studies.modular.docs import ModularDocs
from reasonlab.studies.modular.route_r3 import GROK, RouteR3  # noqa: F401 - GROK shared with the tables
from reasonlab.studies.prontoqa_tinystories.docs import LmDocs
from reasonlab.studies.reasoning_bias.docs import RbDocs
from reasonlab.studies.sections import CommittedSweep, sweep_sections
from reasonlab.sweep.grid import sweep_configs
from reasonlab.sweep.runner import finished_rows
from reasonlab.terminal import counted


def _transitions(configs: list[RunConfig], rows: list[dict]) -> str:
    return anchor_phase.transition_line(rows, configs[0].task.held_out_pairs[0].key, named=False)


def _phase_headline(configs: list[RunConfig], rows: list[dict], _: Path) -> str:
    cells = anchor_phase.phase_cells(rows, configs[0].task.held_out_pairs[0])
    return (f"{_transitions(configs, rows)}; cells (mean over seeds): "
            + "; ".join(anchor_phase.describe_depth(cells, d) for d in sorted({c.y for c in cells})))


def _complexity_headline(configs: list[RunConfig], rows: list[dict], sweep: Path) -> str:
    epochs = configs[0].train.epochs
    spread = anchor_complexity.sensitivity(anchor_complexity.fit_table(rows, sweep), epochs)
    large = min(spread)
    return f"the hypothesis (a smaller initialization more sensitive to k), against γ {large:g}: " + "; ".join(
        f"γ {g:g} in {held_in(anchor_complexity.more_sensitive(spread, g, large))}"
        for g in sorted(spread, reverse=True) if g != large)


def _lr_wd_headline(configs: list[RunConfig], rows: list[dict], _: Path) -> str:
    pair = anchor_lr_wd.PAIRS[0]
    return (f"{pair.caption} inferential: a larger peak lr pushes towards it in "
            f"{anchor_lr_wd.pushes_text(rows, pair, 0)}, a larger weight decay in "
            f"{anchor_lr_wd.pushes_text(rows, pair, 1)} (paper App. E: both)")


def _without_runs(draw: Callable[[list[RunConfig], list[dict], Path], object]) -> Callable[..., object]:
    """A study's ``draw`` that reads its rows only, as a drawer (which is also handed the sweep folder)."""
    return lambda configs, rows, _, scratch: draw(configs, rows, scratch)


def _phase(arm: str) -> CommittedSweep:
    return CommittedSweep(REPO, anchor_phase.STUDY, {f"anchor-phase-{arm}": "phase"}, doc="docs/anchor-composition.md",
                          report=lambda configs, rows, _: anchor_phase.report_lines(configs, rows, 4),
                          headline=_phase_headline, drawer=_without_runs(anchor_phase.draw), arm=arm)


CPU_SWEEPS = (_phase("cpu"),
              CommittedSweep(REPO, anchor_complexity.STUDY, {"anchor-complexity-cpu": "complexity"},
                             drawer=anchor_complexity.draw, doc="docs/anchor-composition.md",
                             report=lambda configs, rows, sweep: anchor_complexity.report_lines(
                                 anchor_complexity.fit_table(rows, sweep), configs[0].train.epochs, 3),
                             headline=_complexity_headline),
              CommittedSweep(REPO, anchor_lr_wd.STUDY, {"anchor-lr-wd-cpu": "lr-wd"}, doc="docs/anchor-composition.md",
                             report=lambda configs, rows, _: anchor_lr_wd.report_lines(rows, configs[0].train.base_lr,
                                                                                       3),
                             headline=_lr_wd_headline, drawer=_without_runs(anchor_lr_wd.draw)),
              _phase("cpu-wide"), _phase("cpu-wide-wd"))
PHASE, COMPLEXITY, LR_WD, WIDE, WIDE_WD = CPU_SWEEPS
ROUTE_R3 = RouteR3(ModularDocs(REPO, modular_phase.STUDY))  # the modular study's own sections
MODULAR_PHASE = ROUTE_R3.docs.sweep
LM_DOCS = LmDocs(REPO)  # the PrOntoQA + TinyStories study's own sections
RB_DOCS = RbDocs(REPO)  # the reasoning-bias study's own sections
BENCHMARKS = {name: committed(study, REPO) for name, study in benchmarks.STUDIES.items()}  # their own sections


# ---- the cell protocol's arm: read from what is committed while its 30 runs land ---------------------------------

CELL_ARM = "cpu-wide-cell"
CELL_FOLDER = f"results/{anchor_phase.spec_for(CELL_ARM).name}"


@cache
def _cell_arm() -> tuple[list[RunConfig], list[dict]]:
    """The arm's configs and its committed finished rows: its own folder's, and those of its runs committed with
    the wd 0.28 arm (the same run ids at peak 2.5e-4)."""
    configs = sweep_configs(anchor_phase.spec_for(CELL_ARM))[0]
    rows = {r["run_id"]: r for folder in (CELL_FOLDER, WIDE_WD.folder) if (REPO / folder).is_dir()
            for r in finished_rows(configs, REPO / folder)}
    return configs, sorted(rows.values(), key=lambda r: (r["seed"], r["init.gamma"], r["train.lr_multiplier"]))


def _cell_arm_inputs() -> list[str]:
    ids = {r["run_id"] for r in _cell_arm()[1]}
    return [f"{folder}/{run_id}/{f}" for folder in (CELL_FOLDER, WIDE_WD.folder) for run_id in sorted(ids)
            if (REPO / folder / run_id).is_dir() for f in ("config.yaml", "summary.json", "metrics.parquet")]


def _cell_arm_table() -> str:
    configs, rows = _cell_arm()
    seeds, lrs = sorted({r["seed"] for r in rows}), len({c.train.lr_multiplier for c in configs})
    return "\n".join([
        f"Committed: {len(rows)} of the arm's {counted(len(configs), 'run')} (seeds {', '.join(map(str, seeds))}); "
        f"the cells and counts below read these alone, and a cell with fewer than its {lrs} peak learning rates × "
        f"{len({c.seed for c in configs})} seeds is a partial reading.", "",
        *anchor_phase.report_lines(configs, rows, 4, over_epochs=True), "",
        *anchor_phase.cell_protocol_lines(configs, rows, 4)]) + "\n"


CELL_TABLES = {CELL_FOLDER.removeprefix("results/"): Table(
    "docs/anchor-composition.md", _cell_arm_inputs, _cell_arm_table, command=train_pack("anchor-phase", CELL_ARM))}


# ---- what this module registers ----------------------------------------------------------------------------------

SECTIONS = [*sweep_sections(CPU_SWEEPS), *CELL_TABLES.items()]
