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

from reasonlab.config import RunConfig
from reasonlab.files import read_json
from reasonlab.records import read_yaml
from reasonlab.sweep.grid import SweepSpec, sweep_configs
from reasonlab.sweep.runner import finished_rows
from reasonlab.terminal import counted

FIGURES = "docs/figures"
T = TypeVar("T")


@dataclass(frozen=True)
class Once:
    """What an object reads once: ``once(key, reader)`` calls ``reader`` the first time ``key`` is asked for and keeps
    what it returned, since several figures, tables and rows read the same records (a ``Repository``'s reading, an
    arm's ``Records``)."""

    read: dict[Hashable, Any] = field(default_factory=dict, repr=False, compare=False, kw_only=True)

    def once(self, key: Hashable, reader: Callable[[], T]) -> T:
        """``reader()``, called once for ``key``."""
        if key not in self.read:
            self.read[key] = reader()
        return self.read[key]


@dataclass(frozen=True)
class Repository(Once):
    """One reading of a repository's committed records (``scripts/regenerate_docs.py`` makes one per invocation):
    its ``root``; whether a section may keep what it measures beside a committed run (``writes``: a file under
    results/ that later readings reuse; False for ``--check`` and ``--pending``, so that they change nothing); and
    what the reading has read (``once``), since a figure, a docs table and the results tables read the same runs."""

    root: Path
    writes: bool = True

    def runs(self, folder: str) -> list[Path]:
        """Every run folder (finished or a ``.partial`` snapshot) under ``folder``: a folder with ``config.yaml``."""
        return self.once(("runs", folder), lambda: sorted(p.parent for p in (self.root / folder).rglob("config.yaml")))

    def yaml(self, path: str | Path) -> dict:
        """A YAML file (a run's ``config.yaml`` as written, a pins file), relative to ``root`` or absolute, parsed
        once per reading: what it returns is shared, to be read and not changed."""
        return self.once(("yaml", self.root / path), lambda: read_yaml(self.root / path, "YAML file"))

    def json(self, path: str | Path, what: str) -> Any:
        """A JSON file (an analysis's figures, ``what`` it is in an error), relative to ``root`` or absolute, parsed
        once per reading: what it returns is shared, to be read and not changed."""
        return self.once(("json", self.root / path), lambda: read_json(self.root / path, what))

    def seed(self, run: Path) -> int:
        """A run folder's seed: a finished run's from its summary (JSON, which other readers share: quicker to parse
        than its ``config.yaml``), an unfinished snapshot's from its ``config.yaml``."""
        summary = run / "summary.json"
        if not run.name.endswith(".partial") and summary.is_file():
            return self.json(summary, "run summary")["config"]["seed"]
        return self.yaml(run / "config.yaml")["seed"]

    def minutes(self, folder: str) -> dict[str, float]:
        """Run id → wall time in minutes of each finished run under ``folder``, as its summary recorded it (each run
        its own time, beside other work): what the docs sum as an arm's cost."""
        return self.once(("minutes", folder), lambda: {
            run.name: self.json(run / "summary.json", "run summary")["wall_time_s"] / 60 for run in self.runs(folder)
            if not run.name.endswith(".partial")})


@dataclass(frozen=True)
class Figures:
    """A generator of figures: ``outputs`` maps each file it makes (repo path) to the file ``draw`` leaves in its
    scratch folder; ``inputs`` are the committed paths it reads, and ``command`` what trains and packs them (what
    ``--check`` and ``--pending`` say when they are missing; empty where the docs give it beside the figure).
    Generators given one ``draw`` (the same callable, as a sweep's figures are) are drawn by one call of it."""
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


def counts(repo: Repository, folders: list[str]) -> str:
    """Committed runs and seeds under ``folders``, and how many of the runs are unfinished snapshots."""
    runs = [d for f in folders for d in repo.runs(f)]
    seeds = sorted({repo.seed(d) for d in runs})
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


def _nothing(configs: list[RunConfig], rows: list[dict], folder: Path) -> None:
    return None


@dataclass(frozen=True)
class CommittedSweep:
    """A study's arm committed under ``results/<study>-<arm>/`` in ``repo``: what draws its figures and which drawn
    file each docs figure is, the doc that shows its report, and the line the results tables give it. ``report``,
    ``headline`` and ``drawer`` read the configs, the finished rows and what ``measure`` reads of the runs' own files
    beyond their rows (None by default); the repository reading keeps each, so that they are read once."""
    repo: Repository
    study: object  # a Study: ``spec(arm)``
    figures: dict[str, str]  # docs figure name → the file ``drawer`` leaves in its folder (no suffix)
    doc: str  # the doc that shows the sweep's report (``report``), as the table ``<study>-<arm>``
    report: Callable[[list[RunConfig], list[dict], Any], list[str]]  # configs, rows, measured → its lines
    headline: Callable[[list[RunConfig], list[dict], Any], str]  # the results table's line
    drawer: Callable[[list[RunConfig], list[dict], Any, Path], object]  # configs, rows, measured, scratch
    measure: Callable[[list[RunConfig], list[dict], Path], Any] = _nothing  # configs, rows, sweep folder
    arm: str = "cpu"

    def spec(self) -> SweepSpec:
        return self.repo.once((self.study.name, self.arm, "spec"), lambda: self.study.spec(self.arm))

    @property
    def folder(self) -> str:
        return f"results/{self.spec().name}"

    @property
    def command(self) -> str:
        """The command that trains the arm and packs it into its results folder."""
        return train_pack(self.spec().name.removesuffix(f"-{self.arm}"), self.arm)

    def configs(self) -> list[RunConfig]:
        return self.repo.once((self.folder, "configs"), lambda: sweep_configs(self.spec())[0])

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

    def measured(self) -> Any:
        """``measure`` of the finished runs, once per reading of the repository."""
        return self.repo.once((self.folder, "measured"), lambda: self.measure(*self.finished()))

    def _read(self) -> tuple[list[RunConfig], list[dict], Any]:
        configs, rows, _ = self.finished()
        return configs, rows, self.measured()

    def draw(self, scratch: Path) -> None:
        self.drawer(*self._read(), scratch)

    def table(self) -> str:
        return "\n".join(self.report(*self._read())) + "\n"

    def found(self) -> str:
        """The results table's line on the sweep (``headline``)."""
        return self.headline(*self._read())

    def cells(self) -> tuple[str, str]:
        """The results table's committed-runs and finding cells, counted and computed from the committed sweep."""
        return counts(self.repo, [self.folder]), self.found()


def sweep_sections(sweeps: Iterable[CommittedSweep]) -> Sections:
    """The figures and the docs table (named after its results folder) of each sweep among ``sweeps``."""
    sweeps = list(sweeps)
    return [*((name, Figures(sweep.inputs, {f"{FIGURES}/{name}.png": f"{made}.png"}, sweep.draw, sweep.command))
              for sweep in sweeps for name, made in sweep.figures.items()),
            *((sweep.folder.removeprefix("results/"), Table(sweep.doc, sweep.inputs, sweep.table,
                                                            command=sweep.command)) for sweep in sweeps)]
