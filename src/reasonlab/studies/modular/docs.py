"""The modular study's sections of docs/modular-icl.md, read from a repository's committed records: the cpu grid
(``results/modular-phase-cpu/``: its phase and shot figures, its report and the results tables' line), the routes'
figures (R1, R2: the paper's cell; R3: the p 11 grokking line; four sets over steps, as packed) and the cpu grid
memorizer's k-shot grid and probe findings. The run the memorizer's section reads is pinned in
``results/modular/pins.yaml``."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, partial
from pathlib import Path

import numpy as np

from reasonlab.config import RunConfig
from reasonlab.errors import UserError
from reasonlab.kinds.modular import figures as modular_figures
from reasonlab.kinds.modular import probes as modular_probes
from reasonlab.kinds.modular.probes import PROBES, TITLES
from reasonlab.plots import save_figure
from reasonlab.store import read_metrics
from reasonlab.studies.base import Study
from reasonlab.studies.modular import report, side_by_side
from reasonlab.studies.sections import (
    FIGURES,
    CommittedSweep,
    Figures,
    Repository,
    Sections,
    Table,
    analyze_pack,
    sweep_sections,
)

MODULAR = "results/modular"
PINS = f"{MODULAR}/pins.yaml"
ROUTES = {"modular-cell": (f"{MODULAR}/cell", "route R1"), "modular-cell-r2": (f"{MODULAR}/cell-r2", "route R2"),
          "modular-grok": (f"{MODULAR}/grok", "route R3")}
DOC = "docs/modular-icl.md"


def _headline(configs: list[RunConfig], rows: list[dict], _: report.Measured) -> str:
    tasks, _lines = report.task_count_claim(rows)
    one, detail = report.depth_one_claim(rows)
    return (f"o.o.d. generalization appearing with the task count (depth 2, α ≥ 0.5, in ≥ 2 seeds per α): "
            f"{report.verdict(tasks)}; depth 1 never generalizing o.o.d.: {report.verdict(one)} ({detail})")


@dataclass(frozen=True)
class ModularDocs:
    """The sections of the modular study (``study``: ``modular-phase``) over the records committed in ``repo``."""

    repo: Repository
    study: Study

    @cached_property
    def sweep(self) -> CommittedSweep:
        """The cpu grid, committed under ``results/modular-phase-cpu/``."""
        return CommittedSweep(self.repo, self.study, {"modular-phase-cpu-L2": "phase-L2-final",
                                                      "modular-phase-cpu-shots": "shots"},
                              drawer=report.draw, doc=DOC, report=lambda _, rows, measured:
                              report.report_lines(rows, measured, 4, figures=False), headline=_headline,
                              measure=lambda _, rows, sweep: report.measure(rows, sweep))

    # ---- the routes: each route's runs, one per seed; its figure draws the first --------------------------------
    def seeds(self, folder: str) -> dict[int, Path]:
        """Seed → run folder of a route's committed runs (finished or packed), one per seed."""
        def read() -> dict[int, Path]:
            runs: dict[int, Path] = {}
            for run in self.repo.runs(folder):
                seed = self.repo.seed(run)
                if seed in runs:
                    raise UserError(f"{folder}: two runs of seed {seed} ({runs[seed].name}, {run.name}) where a "
                                    "route has one")
                runs[seed] = run
            return runs

        return self.repo.once((folder, "seeds"), read)

    def route_run(self, figure: str) -> Path:
        """The route's first seed: the run its figure draws."""
        folder, route = ROUTES[figure]
        runs = self.seeds(folder)
        if not runs:
            raise UserError(f"{folder}: no run where the figure draws {route}'s")
        return runs[min(runs)]

    def _route_inputs(self, figure: str) -> list[str]:
        run = self.route_run(figure).relative_to(self.repo.root)
        return [f"{run}/config.yaml", f"{run}/metrics.parquet"]

    def _draw_route(self, figure: str, scratch: Path) -> None:
        run = self.route_run(figure)
        cfg, rows = self.repo.yaml(run / "config.yaml"), read_metrics(run / "metrics.parquet")
        fig = modular_figures.run_figure(rows, {"config": cfg})
        fig.suptitle(f"{ROUTES[figure][1]}, run {run.name.removesuffix('.partial')} ({packed_state(run, rows)}) · "
                     f"{cfg['profile']}", fontsize=8)
        save_figure(fig, scratch / figure)

    # ---- the cpu grid's memorizer: its k-shot grid (i.d. tasks) and its probes' findings -------------------------
    @cached_property
    def memorizer(self) -> str:
        """The pinned memorizer's analysis folder (8 tasks, α 0.5, depth 2, seed 2 of the cpu grid)."""
        run = self.repo.yaml(PINS)["grid_memorizer"]
        return f"results/{self.study.spec('cpu').name}/{run}/analysis/final"

    def _memorizer_command(self) -> str:
        return analyze_pack("modular-phase", [self.memorizer.split("/")[2]])  # every probe of its kind

    def _draw_memorizer_grid(self, scratch: Path) -> None:
        folder = self.repo.root / self.memorizer
        with np.load(folder / "grid.npz") as arrays:
            modular_probes.draw_grid(self.repo.json(folder / "grid.json", "grid"), dict(arrays), scratch)

    def _memorizer_probes_inputs(self) -> list[str]:
        folder = self.repo.root / self.memorizer
        return [PINS, *(str(path.relative_to(self.repo.root)) for path in probe_files(folder).values())]

    def _memorizer_probes(self) -> str:
        return "\n".join([f"`{self.memorizer}/`:", "", *probe_lines(self.repo, self.repo.root / self.memorizer)]) + "\n"

    def side_by_side(self) -> Sections:
        """The side by side with the reference's own script: its table, and its figure once both codes have a run."""
        committed = side_by_side.Committed(self.repo.root)
        table = ("modular-side-by-side", Table(DOC, committed.inputs, committed.render, command=side_by_side.COMMAND))
        if not committed.both_codes():
            return [table]
        figure = f"{side_by_side.FIGURE}.png"
        return [table, (side_by_side.FIGURE, Figures(committed.inputs, {f"{FIGURES}/{figure}": figure},
                                                     committed.draw, side_by_side.COMMAND))]

    def sections(self) -> Sections:
        command = self._memorizer_command()
        return [*sweep_sections([self.sweep]), *self.side_by_side(),
                *((name, Figures(partial(self._route_inputs, name), {f"{FIGURES}/{name}.png": f"{name}.png"},
                                 partial(self._draw_route, name))) for name in ROUTES),
                ("modular-grid-id-cpu", Figures(lambda: [PINS, f"{self.memorizer}/grid.json",
                                                         f"{self.memorizer}/grid.npz"],
                                                {f"{FIGURES}/modular-grid-id-cpu.png": "grid-id.png"},
                                                self._draw_memorizer_grid, command)),
                ("modular-memorizer-probes", Table(DOC, self._memorizer_probes_inputs, self._memorizer_probes,
                                                   command=command))]


def packed_state(run: Path, rows: list) -> str:
    state = "training, packed" if run.name.endswith(".partial") else "finished"
    return f"{state} at step {max(r.step for r in rows):,}"


def probe_files(folder: Path) -> dict[str, Path]:
    """Probe name → its committed JSON in one analysis folder, for the probes that were run there."""
    return {name: folder / f"{name}.json" for name in PROBES if (folder / f"{name}.json").is_file()}


def probe_lines(repo: Repository, folder: Path) -> list[str]:
    """Each probe's one-line finding on one analysis folder, as the analysis wrote it into its committed JSON."""
    return [f"- **{TITLES[name]}** (`{name}`): {repo.json(path, name)['headline']}"
            for name, path in probe_files(folder).items()]
