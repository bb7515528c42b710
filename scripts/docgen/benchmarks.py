"""The benchmarks' cpu profiles: each one's figure and report from its committed sweep."""

from __future__ import annotations

from functools import cache, partial
from pathlib import Path

from docgen.common import FIGURES, REPO, Figures, Pending, Table, counts, sweep_inputs, train_pack
from reasonlab.config import RunConfig
from reasonlab.studies import benchmarks
from reasonlab.sweep.grid import sweep_configs
from reasonlab.sweep.runner import finished_rows


def bench_folder(name: str) -> str:
    return f"results/{benchmarks.STUDIES[name].spec_for('cpu').name}"


def _bench_configs(name: str) -> list[RunConfig]:
    return sweep_configs(benchmarks.STUDIES[name].spec_for("cpu"))[0]


@cache
def _bench_rows(name: str) -> list[dict]:
    """A committed benchmark's finished rows, read once though its figure, docs table and results cell use them."""
    return finished_rows(_bench_configs(name), REPO / bench_folder(name))


def _bench_table(name: str) -> list[dict]:
    return benchmarks.runs_table(_bench_rows(name), benchmarks.STUDIES[name].plans["cpu"])


def bench_inputs(name: str) -> list[str]:
    return sweep_inputs(bench_folder(name), _bench_configs(name))


def _bench_report(name: str) -> str:
    """The benchmark's report (as its summary.md has it), after what is committed and what it cost to train."""
    cost = (f"Committed: {counts([bench_folder(name)])}; {sum(r['wall_time_s'] for r in _bench_rows(name)) / 60:.1f} "
            "min of training summed over the runs (each run's own wall time).")
    return "\n".join([cost, "", *benchmarks.report_lines(_bench_table(name), level=4)]) + "\n"


def _draw_bench(name: str, scratch: Path) -> None:
    benchmarks.benchmark_figure(_bench_table(name), name, scratch / name, _bench_configs(name)[0].profile)


BENCHMARKS = [name for name in benchmarks.STUDIES if (REPO / bench_folder(name)).is_dir()]  # the committed ones
BENCH_MISSING = [name for name in benchmarks.STUDIES if name not in BENCHMARKS]
BENCH_EARLIER = {  # what the docs observed before a benchmark's runs were committed (1 seed, in the ignored runs/)
    "addition": "small init far above large init on the held-out box",
    "scan": "no setting separates", "cogs": "small init learns i.d. faster, no run fits",
    "prontoqa": "no setting separates"}
assert set(BENCH_EARLIER) == set(benchmarks.STUDIES), "a benchmark without its earlier observation"


def bench_found() -> str:
    """Per benchmark: small init + large wd against large init + small wd, computed from its committed runs, or
    the earlier observation, named as such."""
    small, large = benchmarks.SETTINGS[1], benchmarks.SETTINGS[0]
    found = [f"{b}: {benchmarks.verdict(_bench_table(b), small, large) or 'no size with both settings'}"
             for b in BENCHMARKS]
    earlier = [f"{b}: {BENCH_EARLIER[b]}" for b in BENCH_MISSING]
    return "; ".join(found + ([f"observed in 1 seed, runs not committed: {'; '.join(earlier)}"] if earlier else []))


# ---- what this module registers ----------------------------------------------------------------------------------

BENCHMARK_MINUTES = {"addition": 54, "scan": 28, "cogs": 51, "prontoqa": 40}  # measured here, 2026-11
assert set(BENCHMARK_MINUTES) == set(benchmarks.STUDIES), "a benchmark without its cost (or a cost without it)"
FIGURE_GENERATORS: dict[str, Figures] = {
    f"benchmark-{b}-cpu": Figures(partial(bench_inputs, b), {f"{FIGURES}/benchmark-{b}-cpu.png": f"{b}.png"},
                                  partial(_draw_bench, b)) for b in BENCHMARKS}
TABLES: dict[str, Table] = {
    f"benchmark-{b}-cpu": Table("docs/benchmarks.md", partial(bench_inputs, b), partial(_bench_report, b))
    for b in BENCHMARKS}
PENDING: dict[str, Pending] = {
    f"benchmark-{name}-cpu": Pending(train_pack(name), f"6 runs, 1 seed, about {minutes} min of training summed",
                                     "benchmarks.md") for name, minutes in BENCHMARK_MINUTES.items()}
