"""The docs' reading of a benchmark: its committed ``cpu`` arm (``results/<benchmark>-cpu/``), with its figure, its
report after what is committed and what it cost to train, and the results tables' line (small init + large wd
against large init + small wd)."""

from __future__ import annotations

from pathlib import Path

from reasonlab.config import RunConfig
from reasonlab.studies.base import Study
from reasonlab.studies.benchmarks.plan import SETTINGS
from reasonlab.studies.benchmarks.report import benchmark_figure, report_lines, runs_table, verdict
from reasonlab.studies.sections import CommittedSweep, Repository, counts

SMALL, LARGE = SETTINGS[1], SETTINGS[0]  # small init + large wd, large init + small wd
ARM = "cpu"
DOC = "docs/benchmarks.md"


def committed(study: Study, repo: Repository) -> CommittedSweep:
    """The committed ``cpu`` arm of a benchmark (a ``BenchmarkStudy``) in ``repo``, shown in docs/benchmarks.md; its
    runs' table (``runs_table``) is what its report, headline, figure and claim read."""
    def report(configs: list[RunConfig], rows: list[dict], table: list[dict]) -> list[str]:
        cost = (f"Committed: {counts(repo, [sweep.folder])}; {sum(repo.minutes(sweep.folder).values()):.1f} min of "
                "training summed over the runs (each run's own wall time).")
        return [cost, "", *report_lines(table, level=4)]

    def headline(configs: list[RunConfig], rows: list[dict], table: list[dict]) -> str:
        found = verdict(table, SMALL, LARGE)
        return f"{study.name}: {found.removesuffix('.') if found else 'no size with both settings'}"

    def draw(configs: list[RunConfig], rows: list[dict], table: list[dict], scratch: Path) -> None:
        benchmark_figure(table, study.name, scratch / study.name, configs[0].profile)

    sweep = CommittedSweep(repo, study, {f"benchmark-{study.name}-{ARM}": study.name}, doc=DOC, report=report,
                           headline=headline, drawer=draw, arm=ARM,
                           measure=lambda _, rows, __: runs_table(rows, study.plans[ARM]))
    return sweep
