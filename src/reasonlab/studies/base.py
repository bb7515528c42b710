"""``Study``: the whole contract of a study in one class. A study states its name, the kind its runs are of, and its
arms (each a profile, a grid, the fields it changes and its stated cost); ``run_grid(arm)`` is the template every
arm follows — train (or finish) the arm's grid, ``draw`` its figures, write ``summarize``'s text as ``summary.md``
— and a study overrides only the steps where it has something of its own.

A study registers keyword-only, as a kind does: ``reasonlab.register_study(ReversalPhase)`` with the class (or an
instance), whose attributes say everything the command line lists (``reasonlab studies``) and runs
(``reasonlab reproduce <study> --profile <arm>``: ``run``). An arm may also be a demo (``Arm.demo``), which
``reasonlab demo <name>`` (and ``reproduce``) runs at one seed (``run_demo``) and follows with a suggested command
(``next_step``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from rich.console import Console

from reasonlab.config import RunConfig
from reasonlab.errors import ConfigError
from reasonlab.files import atomic_write_text
from reasonlab.studies.claims import Claim, Finding
from reasonlab.studies.sections import Once, Repository, Sections
from reasonlab.sweep.grid import SweepSpec
from reasonlab.sweep.runner import SweepReport, run_study


@dataclass(frozen=True)
class Demo:
    """What makes an arm a demo: the ``name`` that ``reasonlab demo <name>`` runs it by and one line ``about`` it for
    that command's help."""

    name: str
    about: str


CPU_HOURS = "CPU-hours on an AMD EPYC, 1 thread a run"  # the unit of a cost measured on an arm's committed runs


@dataclass(frozen=True, kw_only=True)
class Arm:
    """One arm of a study: the ``profile`` it runs (of the study's kind), the ``grid`` of axes it sweeps, the
    ``changes`` (``field=value`` overrides) it makes to that profile, which its runs' labels name, its stated
    ``cost`` (one line, shown where the arm is listed: the wall time measured on its committed runs, naming the CPU,
    else its steps) and, for an arm that is a demo, its ``demo``."""

    profile: str
    grid: dict[str, list] = field(default_factory=dict)
    changes: tuple[str, ...] = ()
    cost: str = ""
    demo: Demo | None = None


@dataclass(frozen=True)
class Records(Once):
    """What one arm's runs left: their configs, the results rows of the finished ones, the folder that holds them,
    the overrides they were trained with and, right after training, the sweep's report (None when the records are
    read from a committed folder); what the figures and the summary both read from the runs is read ``once``."""

    arm: str
    configs: list[RunConfig]
    rows: list[dict]
    folder: Path
    report: SweepReport | None = None
    overrides: tuple[str, ...] = ()

    @property
    def figures(self) -> Path:
        return self.folder / "figures"


class Study:
    """One study. Required: ``name``, ``kind`` (the family of the profiles its arms run) and ``arms`` (arm name ->
    ``Arm``); the rest is optional:

    what: one line for ``reasonlab studies``.
    figures: the figure names ``draw`` writes (for listings and docs).
    default: the arm ``reproduce`` runs without ``--profile`` (else ``cpu`` where the study has one, else its first).
    runs_on_cpu: its large arms are meant to train on a CPU (``reproduce`` asks no ``--yes`` for them).
    takes_seeds: ``reproduce --seeds`` may replace an arm's seed axis.

    ``spec(arm)`` is the arm's sweep; ``run_grid`` trains it and then calls ``draw(records, out)`` (the figures,
    returned as paths) and ``summarize(records)`` (the text of ``summary.md``); ``sections(repo)`` are the blocks of
    the docs the study renders from its records committed in a repository (``reasonlab.studies.sections``), and
    ``claims`` and ``findings`` its rows of the results tables that cross studies (``reasonlab.studies.claims``). An
    arm that is a demo runs through ``run_demo`` and ``next_step``.
    """

    name: ClassVar[str]
    kind: ClassVar[str]
    arms: ClassVar[dict[str, Arm]]
    what: ClassVar[str] = ""
    figures: ClassVar[tuple[str, ...]] = ()
    default: ClassVar[str | None] = None
    runs_on_cpu: ClassVar[bool] = False
    takes_seeds: ClassVar[bool] = True

    def default_arm(self) -> str:
        return self.default or ("cpu" if "cpu" in self.arms else next(iter(self.arms)))

    def spec(self, arm: str) -> SweepSpec:
        """The arm's sweep: ``<study>-<arm>``, its profile, changes and grid."""
        a = self.arms[arm]
        return SweepSpec(name=f"{self.name}-{arm}", family=self.kind, profile=a.profile, set=list(a.changes),
                         grid=a.grid)

    def train(self, arm: str, out: Path, make_executor: Any, console: Console, overrides: list[str] = (),
              seeds: list[int] | None = None) -> Records:
        """Run (or finish) the arm's grid in the store ``out`` (``seeds`` in place of its seed axis)."""
        configs, report, rows = run_study(self.spec(arm), out, make_executor, console, overrides, seeds)
        return Records(arm, configs, rows, report.sweep_dir, report, tuple(overrides))

    def run(self, arm: str, out: Path, make_executor: Any, console: Console, overrides: list[str] = (),
            seeds: list[int] | None = None) -> Path:
        """``reasonlab reproduce``: the arm's ``run_grid``, which returns the sweep's folder; an arm that is a demo
        runs as ``reasonlab demo`` runs it (``run_demo``), at one seed (``seeds``, else seed 1), and returns the
        store ``out``."""
        if self.arms[arm].demo is None:
            return self.run_grid(arm, out, make_executor, console, overrides, seeds)
        if seeds is not None and len(seeds) != 1:
            raise ConfigError(f"--seeds: the {arm} arm trains one seed; give one (e.g. --seeds 2)")
        self.run_demo(arm, out, seeds[0] if seeds else 1, make_executor, console, overrides)
        return out

    def run_grid(self, arm: str, out: Path, make_executor: Any, console: Console, overrides: list[str] = (),
                 seeds: list[int] | None = None) -> Path:
        """The template of every arm: train, draw the figures, write ``summary.md``; returns the sweep's folder."""
        records = self.train(arm, out, make_executor, console, overrides, seeds)
        for path in self.draw(records, records.figures):
            console.print(f"figure: {path}")
        atomic_write_text(records.folder / "summary.md", self.summarize(records))
        console.print(f"summary: {records.folder / 'summary.md'}")
        return records.folder

    def run_demo(self, arm: str, out: Path, seed: int, make_executor: Any, console: Console,
                 overrides: list[str] = ()) -> list[Path]:
        """``reasonlab demo``: the arm at one ``seed``; returns what ``next_step`` names (by default the arm's
        template ``run_grid`` at that seed, and its sweep's folder)."""
        return [self.run_grid(arm, out, make_executor, console, [f"seed={seed}", *overrides])]

    def next_step(self, arm: str, paths: list[Path]) -> str:
        """The command ``reasonlab demo`` suggests after the arm, given what ``run_demo`` returned."""
        return f"reasonlab report {paths[0]}"

    def draw(self, records: Records, out: Path) -> list[Path]:
        """Draw the arm's figures into ``out``; none by default."""
        return []

    def summarize(self, records: Records) -> str:
        """The text of the arm's ``summary.md``."""
        raise NotImplementedError(f"study {self.name!r} writes no summary")

    def sections(self, repo: Repository) -> Sections:
        """The docs blocks (figures and generated tables, each with its name) the study renders from its records
        committed in the repository ``repo`` reads; none by default."""
        return []

    def claims(self, repo: Repository) -> list[Claim]:
        """The papers' claims the study tests, each read on units from its records committed in ``repo``: its rows
        of the README's verdict table; none by default."""
        return []

    def findings(self, repo: Repository) -> list[Finding]:
        """What its committed arms showed: its rows of docs/results.md's "what reproduces"; none by default."""
        return []

    def finding_inputs(self, repo: Repository) -> list[str]:
        """The committed paths its claims and findings read, which ``--check`` and ``--pending`` require."""
        return []
