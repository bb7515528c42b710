"""The blocks of the docs a study renders from its committed records (``Study.sections``): figures and generated
tables, each with the committed inputs it reads and the command that trains and packs them, and the committed
sweep, the block most studies render (an arm's runs packed under ``results/<study>-<arm>/``).

``scripts/regenerate_docs.py`` gathers every study's sections and draws, rewrites or checks them (``--check``,
``--pending``); a section reads files of the ``Repository`` it is asked about, one reading of a repository per
invocation, which holds what the invocation may write and what it has read.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from reasonlab.config import RunConfig, load_yaml
from reasonlab.sweep.grid import sweep_configs
from reasonlab.sweep.runner import finished_rows
from reasonlab.terminal import counted

FIGURES = "docs/figures"
T = TypeVar("T")


@dataclass(frozen=True)
class Repository:
    """One reading of a repository's committed records (``scripts/regenerate_docs.py`` makes one per invocation):
    its ``root``; whether a section may keep what it measures beside a committed run (``writes``: a file under
    results/ that later readings reuse; False for ``--check`` and ``--pending``, so that they change nothing); and
    what the reading has read (``once``), since a figure, a docs table and the results tables read the same runs."""

    root: Path
    writes: bool = True
    read: dict[Hashable, Any] = field(default_factory=dict, repr=False, compare=False)

    def once(self, key: Hashable, reader: Callable[[], T]) -> T:
        """``reader()``, called once per reading for ``key``."""
        if key not in self.read:
            self.read[key] = reader()
        return self.read[key]


@dataclass(frozen=True)
class Figures:
    """A generator of figures: ``outputs`` maps each file it makes (repo path) to the file ``draw`` leaves in its
    scratch folder; ``inputs`` are the committed paths it reads, and ``command`` what trains and packs them (what
    ``--check`` and ``--pending`` say when they are missing; empty where the docs give it beside the figure)."""
    inputs: Callable[[], list[str]]
    outputs: dict[str, str]
    draw: Callable[[Path], object]
    command: str = ""


@dataclass(frozen=True)
class Table:
    """A generated table in ``doc`` (between its markers, or the whole file when ``whole``), its inputs and the
    command that commits them (as for ``Figures``)."""
    doc: str
    inputs: Callable[[], list[str]]
    render: Callable[[], str]
    whole: bool = False
    command: str = ""


# (name, block) pairs; a table's name is its marker, `<!-- table: NAME -->`; a figure and a table may share a name
Sections = list[tuple[str, Figures | Table]]


def run_folders(root: Path, folder: str) -> list[Path]:
    """Every run folder (finished or a ``.partial`` snapshot) under ``root / folder``: a folder with ``config.yaml``."""
    return sorted(p.parent for p in (root / folder).rglob("config.yaml"))


def counts(root: Path, folders: list[str]) -> str:
    """Committed runs and seeds under ``folders``, and how many of the runs are unfinished snapshots."""
    runs = [d for f in folders for d in run_folders(root, f)]
    seeds = sorted({load_yaml(d / "config.yaml")["seed"] for d in runs})
    partial = sum(d.name.endswith(".partial") for d in runs)
    where = ", ".join(f"`{f}/`" for f in folders)
    return (counted(len(runs), "run") + (f" ({partial} unfinished, as snapshots)" if partial else "")
            + f", seed{'s' if len(seeds) > 1 else ''} {', '.join(map(str, seeds))}: {where}")


def train_pack(study: str, profile: str = "cpu", results: str = "results") -> str:
    """Train a study's arm in a store outside the work tree, then pack its records under ``results``."""
    return (f"reasonlab reproduce {study} --profile {profile} --out ~/reasonlab-runs && reasonlab pack "
            f"~/reasonlab-runs/{study}-{profile} {results}/{study}-{profile}")


def analyze_pack(study: str, runs: list[str], probes: str = "") -> str:
    """Train and pack, then analyze some runs (with ``probes``, or every probe of their kind) and pack again."""
    return (f"{train_pack(study)}, then " + ", ".join(f"reasonlab analyze ~/reasonlab-runs/{study}-cpu/{run}"
                                                      f"{' ' + probes if probes else ''}" for run in runs)
            + " and the same pack again (it adds the analysis files)")


def sweep_inputs(folder: str, configs: list[RunConfig]) -> list[str]:
    """Each run's record in a committed sweep (its results table is rebuilt from them: packs carry none)."""
    return [f"{folder}/{c.run_id()}/{f}" for c in configs for f in ("config.yaml", "summary.json", "metrics.parquet")]


Finished = tuple[list[RunConfig], list[dict], Path]  # a committed sweep's configs, finished rows and folder


@dataclass(frozen=True)
class CommittedSweep:
    """A study's arm committed under ``results/<study>-<arm>/`` in ``repo``: what draws its figures and which drawn
    file each docs figure is, the doc that shows its report, and the line the results tables give it."""
    repo: Repository
    study: object  # a Study: ``spec(arm)``
    figures: dict[str, str]  # docs figure name → the file ``drawer`` leaves in its folder (no suffix)
    doc: str  # the doc that shows the sweep's report (``report``), as the table ``<study>-<arm>``
    report: Callable[[list[RunConfig], list[dict], Path], list[str]]  # configs, rows, sweep folder → its lines
    headline: Callable[[list[RunConfig], list[dict], Path], str]  # the results table's line
    drawer: Callable[[list[RunConfig], list[dict], Path, Path], object]  # configs, rows, sweep folder, scratch
    arm: str = "cpu"

    @property
    def folder(self) -> str:
        return f"results/{self.study.spec(self.arm).name}"

    @property
    def command(self) -> str:
        """The command that trains the arm and packs it into its results folder."""
        return train_pack(self.study.spec(self.arm).name.removesuffix(f"-{self.arm}"), self.arm)

    def configs(self) -> list[RunConfig]:
        return sweep_configs(self.study.spec(self.arm))[0]

    def inputs(self) -> list[str]:
        return sweep_inputs(self.folder, self.configs())

    def finished(self) -> Finished:
        """The configs, the committed finished rows (its results table, rebuilt from the run folders) and the folder:
        read once per reading of the repository, though the figure, the docs table and the results tables' rows all
        use them."""
        def read() -> Finished:
            configs, folder = self.configs(), self.repo.root / self.folder
            return configs, finished_rows(configs, folder), folder

        return self.repo.once((self.folder, "finished"), read)

    def draw(self, scratch: Path) -> None:
        self.drawer(*self.finished(), scratch)

    def table(self) -> str:
        return "\n".join(self.report(*self.finished())) + "\n"

    def cells(self) -> tuple[str, str]:
        """The results table's committed-runs and finding cells, counted and computed from the committed sweep."""
        return counts(self.repo.root, [self.folder]), self.headline(*self.finished())


def sweep_sections(sweeps: Iterable[CommittedSweep]) -> Sections:
    """The figures and the docs table (named after its results folder) of each sweep among ``sweeps``."""
    sweeps = list(sweeps)
    return [*((name, Figures(sweep.inputs, {f"{FIGURES}/{name}.png": f"{made}.png"}, sweep.draw, sweep.command))
              for sweep in sweeps for name, made in sweep.figures.items()),
            *((sweep.folder.removeprefix("results/"), Table(sweep.doc, sweep.inputs, sweep.table,
                                                            command=sweep.command)) for sweep in sweeps)]
