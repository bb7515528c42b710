"""The benchmarks' cpu profiles: each one a reduced sweep (``sweeps.CpuSweep``) with its figure and report."""

from __future__ import annotations

from pathlib import Path

from docgen.common import Pending, counts, train_pack
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
BENCH_EARLIER = {  # what the docs observed before a benchmark's runs were committed (1 seed, in the ignored runs/)
    "addition": "small init far above large init on the held-out box",
    "scan": "no setting separates", "cogs": "small init learns i.d. faster, no run fits",
    "prontoqa": "no setting separates"}
assert set(BENCH_EARLIER) == set(benchmarks.STUDIES), "a benchmark without its earlier observation"
BENCHMARKS = [name for name, sweep in SWEEPS.items() if sweep.committed]
BENCH_MISSING = [name for name in SWEEPS if name not in BENCHMARKS]


def bench_found() -> str:
    """Per benchmark: its committed runs' headline, or the earlier observation, named as such."""
    found = [SWEEPS[b].headline(*SWEEPS[b].finished()) for b in BENCHMARKS]
    earlier = [f"{b}: {BENCH_EARLIER[b]}" for b in BENCH_MISSING]
    return "; ".join(found + ([f"observed in 1 seed, runs not committed: {'; '.join(earlier)}"] if earlier else []))


# ---- what this module registers ----------------------------------------------------------------------------------

BENCHMARK_MINUTES = {"addition": 54, "scan": 28, "cogs": 51, "prontoqa": 40}  # measured here, 2026-11
assert set(BENCHMARK_MINUTES) == set(benchmarks.STUDIES), "a benchmark without its cost (or a cost without it)"
FIGURE_GENERATORS, TABLES = register(SWEEPS.values())
PENDING: dict[str, Pending] = {
    f"benchmark-{name}-cpu": Pending(train_pack(name), f"6 runs, 1 seed, about {minutes} min of training summed",
                                     "benchmarks.md") for name, minutes in BENCHMARK_MINUTES.items()}
