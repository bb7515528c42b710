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
BENCH_EARLIER = {  # what the docs observed before any of a benchmark's runs were committed (1 seed, in runs/)
    "addition": "small init far above large init on the held-out box",
    "scan": "no setting separates", "cogs": "small init learns i.d. faster, no run fits",
    "prontoqa": "no setting separates"}
assert set(BENCH_EARLIER) == set(benchmarks.STUDIES), "a benchmark without its earlier observation"
BENCHMARKS = [name for name, sweep in SWEEPS.items() if sweep.committed]
BENCH_MISSING = [name for name in SWEEPS if name not in BENCHMARKS]


def bench_short() -> str:
    """The README's cell: per committed benchmark, at how many sizes small init + large wd beat large init + small
    wd, and per size the two means (2 digits) with the per-seed tally and which side did not fit."""
    parts = []
    for b in BENCHMARKS:
        comp = benchmarks.comparison(_table(b, SWEEPS[b].finished()[1]), SMALL, LARGE)
        better = sum(w.startswith("better") for *_, w in comp)
        sizes = "; ".join(f"{n:,} rows: {va:.2f} vs {vb:.2f}, {_brief(w)}"
                          for n, va, vb, w in comp)
        parts.append(f"{b}: small init better at {better} of {len(comp)} sizes ({sizes})")
    return "; ".join(parts) if parts else "not committed yet"


def _brief(word: str) -> str:
    return word.replace(" + large wd", "").replace(" + small wd", "").replace("; ", ", ")


def bench_found() -> str:
    """Per benchmark: its committed runs' headline, or the earlier observation, named as such."""
    found = [SWEEPS[b].headline(*SWEEPS[b].finished()) for b in BENCHMARKS]
    earlier = [f"{b}: {BENCH_EARLIER[b]}" for b in BENCH_MISSING]
    return "; ".join(found + ([f"observed in 1 seed, runs not committed: {'; '.join(earlier)}"] if earlier else []))


# ---- what this module registers ----------------------------------------------------------------------------------

MINUTES_PER_SEED = {"addition": 24, "scan": 20, "cogs": 47, "prontoqa": 26}  # training summed, measured 2026-12-07
assert set(MINUTES_PER_SEED) == set(benchmarks.STUDIES), "a benchmark without its cost (or a cost without it)"


def cost(name: str) -> str:
    """What a benchmark's cpu sweep trains and about what it costs here (the runs' own wall times summed)."""
    seeds = benchmarks.STUDIES[name].plans["cpu"].seeds
    return (f"{len(SWEEPS[name].configs())} runs, {len(seeds)} seed{'s' if len(seeds) > 1 else ''}, about "
            f"{MINUTES_PER_SEED[name] * len(seeds)} min of training summed")


FIGURE_GENERATORS, TABLES = register(SWEEPS.values())
PENDING: dict[str, Pending] = {f"benchmark-{name}-cpu": Pending(train_pack(name), cost(name), "benchmarks.md")
                               for name in benchmarks.STUDIES}
