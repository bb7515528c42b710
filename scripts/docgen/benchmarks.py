"""The benchmarks' cpu profiles: each one a reduced sweep (``sweeps.CpuSweep``) with its figure and report."""

from __future__ import annotations

from pathlib import Path

from docgen.common import counts
from docgen.sweeps import CpuSweep, register
from reasonlab.config import RunConfig
from reasonlab.studies import benchmarks

SMALL, LARGE = benchmarks.SETTINGS[1], benchmarks.SETTINGS[0]  # small init + large wd, large init + small wd


def _table(name: str, rows: list[dict]) -> list[dict]:
    return benchmarks.runs_table(rows, benchmarks.STUDIES[name].plans["cpu"])


def _report(name: str, configs: list[RunConfig], rows: list[dict], sweep: Path) -> list[str]:
    """The benchmark's report (as its summary.md has it), after what is committed and what it cost to train."""
    cost = (f"Committed: {counts([f'results/{sweep.name}'])}; {sum(r['wall_time_s'] for r in rows) / 60:.1f} "
            "min of training summed over the runs (each run's own wall time).")
    return [cost, "", *benchmarks.report_lines(_table(name, rows), level=4)]


def _headline(name: str, configs: list[RunConfig], rows: list[dict], _: Path) -> str:
    """Small init + large wd against large init + small wd, computed from the committed runs."""
    found = benchmarks.verdict(_table(name, rows), SMALL, LARGE)
    return f"{name}: {found.removesuffix('.') if found else 'no size with both settings'}"


def _draw(name: str, configs: list[RunConfig], rows: list[dict], _: Path, scratch: Path) -> None:
    benchmarks.benchmark_figure(_table(name, rows), name, scratch / name, configs[0].profile)


def _sweep(name: str) -> CpuSweep:
    return CpuSweep(benchmarks.STUDIES[name], {f"benchmark-{name}-cpu": name}, doc="docs/benchmarks.md",
                    report=lambda *a: _report(name, *a), headline=lambda *a: _headline(name, *a),
                    drawer=lambda *a: _draw(name, *a))


SWEEPS = {name: _sweep(name) for name in benchmarks.STUDIES}


def bench_found() -> str:
    """Per benchmark, its committed runs' headline."""
    return "; ".join(sweep.headline(*sweep.finished()) for sweep in SWEEPS.values())


# ---- what this module registers ----------------------------------------------------------------------------------

FIGURE_GENERATORS, TABLES = register(SWEEPS.values())
