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
    """The committed ``cpu`` arm of a benchmark (a ``BenchmarkStudy``) in ``repo``, shown in docs/benchmarks.md."""
    def table(rows: list[dict]) -> list[dict]:
        return runs_table(rows, study.plans[ARM])

    def report(configs: list[RunConfig], rows: list[dict], sweep: Path) -> list[str]:
        cost = (f"Committed: {counts(repo.root, [f'results/{sweep.name}'])}; "
                f"{sum(r['wall_time_s'] for r in rows) / 60:.1f} min of training summed over the runs (each run's "
                "own wall time).")
        return [cost, "", *report_lines(table(rows), level=4)]

    def headline(configs: list[RunConfig], rows: list[dict], _: Path) -> str:
        found = verdict(table(rows), SMALL, LARGE)
        return f"{study.name}: {found.removesuffix('.') if found else 'no size with both settings'}"

    def draw(configs: list[RunConfig], rows: list[dict], _: Path, scratch: Path) -> None:
        benchmark_figure(table(rows), study.name, scratch / study.name, configs[0].profile)

    return CommittedSweep(repo, study, {f"benchmark-{study.name}-{ARM}": study.name}, doc=DOC,
                          report=report, headline=headline, drawer=draw, arm=ARM)
