"""The anchor studies' sections of docs/anchor-composition.md, read from a repository's committed records: the
reduced sweeps (the phase diagrams of the ``cpu``, ``cpu-wide`` and wd 0.28 arms, inferential complexity, learning
rate × weight decay: each one's figure, report and results tables' line), the cell protocol's arm as far as it is
committed, and the mechanism pair (two cpu-phase runs, their committed analyses side by side). The pair's run ids
are pinned in ``results/anchor/pins.yaml``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property, partial
from pathlib import Path

import numpy as np

from reasonlab.config import RunConfig
from reasonlab.files import read_json
from reasonlab.kinds.anchor import probes as anchor_probes
from reasonlab.kinds.anchor.cells import phase_cells
from reasonlab.report.markdown import held_in
from reasonlab.studies.anchor import complexity, lr_wd, phase
from reasonlab.studies.anchor.trajectory_docs import PINS
from reasonlab.studies.base import Study
from reasonlab.studies.sections import (
    FIGURES,
    CommittedSweep,
    Figures,
    Repository,
    Sections,
    Table,
    analyze_pack,
    sweep_sections,
    train_pack,
)
from reasonlab.sweep.grid import sweep_configs
from reasonlab.sweep.results import markdown_table
from reasonlab.sweep.runner import finished_rows
from reasonlab.terminal import counted

DOC = "docs/anchor-composition.md"
PHASE_ARMS = ("cpu", "cpu-wide", "cpu-wide-wd")  # the phase arms committed whole, each with its figure and report
CELL_ARM = "cpu-wide-cell"


# ---- the reduced sweeps: figures, reports and the results tables' lines -----------------------------------------

def _phase_headline(configs: list[RunConfig], rows: list[dict], _: None) -> str:
    pair = configs[0].task.held_out_pairs[0]
    cells = phase_cells(rows, pair)
    return (f"{phase.transition_line(rows, pair.key, named=False)}; cells (mean over seeds): "
            + "; ".join(phase.describe_depth(cells, d) for d in sorted({c.y for c in cells})))


def _complexity_headline(configs: list[RunConfig], rows: list[dict], table: list[dict]) -> str:
    spread = complexity.sensitivity(table, configs[0].train.epochs)
    large = min(spread)
    return f"the hypothesis (a smaller initialization more sensitive to k), against γ {large:g}: " + "; ".join(
        f"γ {g:g} in {held_in(complexity.more_sensitive(spread, g, large))}"
        for g in sorted(spread, reverse=True) if g != large)


def _lr_wd_headline(configs: list[RunConfig], rows: list[dict], _: None) -> str:
    pair = lr_wd.PAIRS[0]
    return (f"{pair.caption} inferential: a larger peak lr pushes towards it in "
            f"{lr_wd.pushes_text(rows, pair, 0)}, a larger weight decay in "
            f"{lr_wd.pushes_text(rows, pair, 1)} (paper App. E: both)")


def _without_runs(draw: Callable[[list[RunConfig], list[dict], Path], object]) -> Callable[..., object]:
    """A study's ``draw`` that reads its rows only, as the drawer of a sweep that measures nothing more."""
    return lambda configs, rows, _, scratch: draw(configs, rows, scratch)


def phase_sweep(repo: Repository, study: Study, arm: str) -> CommittedSweep:
    """A phase arm (of ``study``, anchor-phase) committed under ``results/anchor-phase-<arm>/``."""
    return CommittedSweep(repo, study, {f"anchor-phase-{arm}": "phase"}, doc=DOC,
                          report=lambda configs, rows, _: phase.report_lines(configs, rows, 4),
                          headline=_phase_headline, drawer=_without_runs(phase.draw), arm=arm)


def complexity_sweep(repo: Repository, study: Study) -> CommittedSweep:
    """The anchor-complexity ``cpu`` arm, committed under ``results/anchor-complexity-cpu/``."""
    return CommittedSweep(repo, study, {"anchor-complexity-cpu": "complexity"}, doc=DOC,
                          report=lambda configs, _, table: complexity.report_lines(table, configs[0].train.epochs, 3),
                          headline=_complexity_headline,
                          drawer=lambda configs, _, table, scratch: complexity.draw(configs, table, scratch),
                          measure=lambda _, rows, sweep: complexity.fit_table(rows, sweep))


def lr_wd_sweep(repo: Repository, study: Study) -> CommittedSweep:
    """The anchor-lr-wd ``cpu`` arm, committed under ``results/anchor-lr-wd-cpu/``."""
    return CommittedSweep(repo, study, {"anchor-lr-wd-cpu": "lr-wd"}, doc=DOC,
                          report=lambda configs, rows, _: lr_wd.report_lines(rows, configs[0].train.base_lr, 3),
                          headline=_lr_wd_headline, drawer=_without_runs(lr_wd.draw))


# ---- the cell protocol's arm: read from what is committed while its runs land -----------------------------------

def _cell_folders(study: Study) -> tuple[str, str]:
    """The arm's own folder, and the wd 0.28 arm's, which holds the arm's runs at peak 2.5e-4 (the same run ids)."""
    return f"results/{study.spec(CELL_ARM).name}", f"results/{study.spec('cpu-wide-wd').name}"


def _cell_arm(repo: Repository, study: Study) -> tuple[list[RunConfig], list[dict]]:
    """The arm's configs and its committed finished rows, from both its folders (read once per reading of the
    repository: the table and its inputs both use them)."""
    def read() -> tuple[list[RunConfig], list[dict]]:
        configs, root = sweep_configs(study.spec(CELL_ARM))[0], repo.root
        rows = {r["run_id"]: r for folder in _cell_folders(study) if (root / folder).is_dir()
                for r in finished_rows(configs, root / folder)}
        return configs, sorted(rows.values(), key=lambda r: (r["seed"], r["init.gamma"], r["train.lr_multiplier"]))

    return repo.once((CELL_ARM, "finished"), read)


def _cell_arm_inputs(repo: Repository, study: Study) -> list[str]:
    ids = {r["run_id"] for r in _cell_arm(repo, study)[1]}
    return [f"{folder}/{run_id}/{f}" for folder in _cell_folders(study) for run_id in sorted(ids)
            if (repo.root / folder / run_id).is_dir() for f in ("config.yaml", "summary.json", "metrics.parquet")]


def _cell_arm_table(repo: Repository, study: Study) -> str:
    configs, rows = _cell_arm(repo, study)
    seeds, lrs = sorted({r["seed"] for r in rows}), len({c.train.lr_multiplier for c in configs})
    return "\n".join([
        f"Committed: {len(rows)} of the arm's {counted(len(configs), 'run')} (seeds {', '.join(map(str, seeds))}); "
        f"the cells and counts below read these alone, and a cell with fewer than its {lrs} peak learning rates × "
        f"{len({c.seed for c in configs})} seeds is a partial reading.", "",
        *phase.report_lines(configs, rows, 4, over_epochs=True), "",
        *phase.cell_protocol_lines(configs, rows, 4)]) + "\n"


# ---- the mechanism pair: flow and representations of two cpu-phase runs, from their committed analyses ---

MECHANISM_PROBES = ("flow", "representations", "condensation", "embedding", "fused")


@dataclass(frozen=True)
class MechanismPair:
    """The pinned pair of ``study``'s (anchor-phase) cpu arm in ``repo``: a symmetric and an inferential run, each
    with its committed analysis of the final weights."""

    repo: Repository
    study: Study

    @cached_property
    def probed(self) -> dict[str, str]:
        """``symmetric`` and ``inferential`` → the run id the docs show."""
        return self.repo.yaml(PINS)["probed"]

    @cached_property
    def sweep(self) -> CommittedSweep:
        return phase_sweep(self.repo, self.study, "cpu")

    def folder(self, which: str) -> str:
        return f"results/{self.study.spec('cpu').name}/{self.probed[which]}/analysis/final"

    def command(self, *which: str) -> str:
        return analyze_pack("anchor-phase", [self.probed[w] for w in which],
                            " ".join(f"--probe {p}" for p in MECHANISM_PROBES))

    def _draw(self, which: str, scratch: Path) -> None:
        folder = self.repo.root / self.folder(which)
        with np.load(folder / "flow.npz") as arrays:
            anchor_probes.draw_flow(read_json(folder / "flow.json", "flow"), arrays["pattern"],
                                    scratch / f"anchor-flow-{which}")
        with np.load(folder / "representations.npz") as arrays:
            anchor_probes.draw_representations(read_json(folder / "representations.json", "representations"),
                                               dict(arrays), scratch / f"anchor-representations-{which}")

    def _figure_inputs(self, which: str) -> list[str]:
        return [f"{self.folder(which)}/{name}.{ext}" for name in ("flow", "representations") for ext in ("json", "npz")]

    def _table_inputs(self) -> list[str]:
        return [f"{self.folder(w)}/{probe}.json" for w in self.probed for probe in MECHANISM_PROBES] + [
            f"{self.sweep.folder}/{run}/summary.json" for run in self.probed.values()]

    def _table(self) -> str:
        """The pair's analyses side by side, every number read from their committed JSON."""
        configs, rows, _ = self.sweep.finished()
        pair = configs[0].task.held_out_pairs[0]
        by_id = {r["run_id"]: r for r in rows}
        cols = {w: {probe: read_json(self.repo.root / self.folder(w) / f"{probe}.json", probe)
                    for probe in MECHANISM_PROBES} for w in self.probed}

        def per_layer(w: str, edge: str) -> str:
            return ", ".join(f"{v:.2f}" for v in cols[w]["flow"]["mean_flow"][edge])

        def row(name: str, cell: Callable[[str], str]) -> list[str]:
            return [name, *(cell(w) for w in self.probed)]

        head = [""] + [f"γ {by_id[run]['init.gamma']:g}, {by_id[run]['label']} (`{run}`)"
                       for run in self.probed.values()]
        fused = [f"({p[0]},{p[1]}) vs ({p[-2]},{p[-1]})" for p in cols["symmetric"]["fused"]["pairs"]]  # "33-vs-22"
        return markdown_table(head, [
            row(f"{pair.caption} inferential / symmetric accuracy", lambda w: " / ".join(
                f"{by_id[self.probed[w]][f'outcome.{pair.key}.{t}']:.3f}" for t in ("inferential", "symmetric"))),
            *(row(f"mean attention {edge.replace('->', ' → ')}, layer by layer",
                  partial(per_layer, edge=edge)) for edge in ("last->a1", "last->a2", "a2->key")),
            row("mirror merge (0: mirror pairs coincide)",
                lambda w: f"{cols[w]['representations']['mirror_merge']:.2f}"),
            row("first-layer W_Q condensation: groups, largest group's share", lambda w: (
                f"{(c := cols[w]['condensation']['W_Q layer 1'])['groups']}, {c['largest_group_share']:.0%}")),
            row("embedding: |Spearman(value, PC1)|", lambda w: f"{cols[w]['embedding']['pc1_spearman']:.2f}"),
            row(f"fused vectors: boxed − other cosine ({' / '.join(fused)})", lambda w: " / ".join(
                f"{v['boxed_contrast']:.2f}" for v in cols[w]["fused"]["pairs"].values())),
        ])

    def sections(self) -> Sections:
        """Each run's flow and representations figures, and the table of both runs' analyses."""
        return [*((f"anchor-mechanism-{which}", Figures(
                      partial(self._figure_inputs, which),
                      {f"{FIGURES}/anchor-{probe}-{which}.png": f"anchor-{probe}-{which}.png"
                       for probe in ("flow", "representations")}, partial(self._draw, which), self.command(which)))
                  for which in self.probed),
                ("anchor-mechanism-cpu", Table(DOC, self._table_inputs, self._table,
                                               command=self.command(*self.probed)))]


def phase_sections(repo: Repository, study: Study) -> Sections:
    """The anchor-phase study's sections: its committed arms, its cell protocol's arm and its mechanism pair."""
    cell = Table(DOC, partial(_cell_arm_inputs, repo, study), partial(_cell_arm_table, repo, study),
                 command=train_pack("anchor-phase", CELL_ARM))
    return [*sweep_sections(phase_sweep(repo, study, arm) for arm in PHASE_ARMS),
            (_cell_folders(study)[0].removeprefix("results/"), cell), *MechanismPair(repo, study).sections()]
