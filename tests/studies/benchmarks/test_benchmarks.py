"""The benchmark studies (scan, cogs, addition, prontoqa): the verdict over seeds from a runs table, and a study end
to end on a tiny plan, writing its figure and verdicts."""

from __future__ import annotations

import pytest
from conftest import figures_written


def _benchmark_table(values: dict[tuple[str, int], tuple[float, ...]]) -> list[dict]:
    """A runs table as ``benchmarks.report.runs_table`` makes it: (setting, size) → headline per seed 1, 2, …; a run
    below 0.3 is labelled not fitted."""
    return [{"setting": s, "n": n, "seed": seed, "value": v, "label": "not-fitted" if v < 0.3 else "x",
             "headline": "ood_exact", "converge_step": None, "fit_step": 10.0, "categories": {"len:≤8": v}}
            for (s, n), vs in values.items() for seed, v in enumerate(vs, start=1)]


def test_benchmark_verdict_means_over_seeds_and_counts_each_seed(tmp_path):
    """The headline compares the means; a side that did not fit in most seeds makes the size not testable, and
    seeds that disagree make it mixed; beside it, in how many seeds small init was better on its own, how many runs
    did not fit, and the seed counts where the sides differ; the figure draws every run."""
    from reasonlab.studies.benchmarks.report import RULE, SETTINGS, benchmark_figure, verdict

    large, small = SETTINGS[0], SETTINGS[1]
    table = _benchmark_table({(small, 100): (0.9, 0.8, 0.7), (large, 100): (0.2, 0.2, 0.2),
                              (small, 1000): (0.4, 0.4, 0.9), (large, 1000): (0.5, 0.5, 0.5)})
    assert verdict(table, small, large) == (
        f"{small} vs {large}: n 100: 0.800 vs 0.200 (not testable; seed by seed better in 3 of 3; {large} did not fit "
        "in 3 of 3 seeds); n 1000: 0.567 vs 0.500 (mixed across seeds; seed by seed better in 1 of 3). Better at 0 of "
        f"2 sizes (means over 3 seeds; {RULE}).")
    assert "n 1000: 0.500 vs 0.567 (mixed across seeds; seed by seed better in 2 of 3)" in verdict(table, large, small)
    clear = _benchmark_table({(small, 100): (0.9, 0.8, 0.7), (large, 100): (0.3, 0.4, 0.35)})
    assert "n 100: 0.800 vs 0.350 (better; seed by seed better in 3 of 3). Better at 1 of 1" in verdict(
        clear, small, large)
    uneven = _benchmark_table({(small, 100): (0.9, 0.4, 0.4), (large, 100): (0.5,)})
    assert verdict(uneven, small, large) == (
        f"{small} vs {large}: n 100: 0.567 vs 0.500 (better; seed by seed better in 1 of 1; seeds 3 vs 1). Better at "
        f"1 of 1 sizes (means over each side's seeds; {RULE}).")
    assert figures_written(benchmark_figure(table, "addition", tmp_path / "addition", "tiny"))


@pytest.mark.slow
def test_benchmark_study_end_to_end_writes_figure_and_verdicts(tmp_path):
    """A tiny addition study (3 settings × 2 nested sizes) through the sweep machinery: one row per run, a
    figure, and a summary with per-category rows and a verdict per size."""
    import io

    from rich.console import Console

    from reasonlab.studies.benchmarks import BenchmarkStudy, Plan
    from reasonlab.sweep.executors import LocalExecutor

    study = BenchmarkStudy(name="addition", plans={"cpu": Plan((0.3, 0.7), (0.01, 0.1),
                                                               sizes=((128, 2, 1), (256, 1, 1)), seeds=(1,))},
                           about="tiny addition")
    tiny = ["task.max_operand=99", "task.held_out=[40,60]", "task.eval_n=64", "model.d_model=16", "model.d_k=8",
            "model.d_v=8", "model.d_ff=32", "train.batch_size=64", "train.checkpoint_every=1"]
    sweep_dir = study.run("cpu", tmp_path, lambda n: LocalExecutor(2, 1), Console(file=io.StringIO()), tiny)
    summary = (sweep_dir / "summary.md").read_text()
    assert (sweep_dir / "figures" / "addition.png").is_file()
    assert summary.count("| addition") == 0 and summary.count("init + ") >= 6
    assert "| carries:0 |" in summary and "n 128:" in summary and "n 256:" in summary
    from reasonlab.studies.benchmarks.report import RULE

    assert "Better at" in summary and "tiny addition" in summary and f"(1 seed; {RULE})" in summary

    # the docs' section comes back from the finished runs' records alone (checkpoints are never committed)
    import shutil

    from reasonlab.studies.benchmarks.report import report_lines, runs_table
    from reasonlab.sweep.grid import sweep_configs
    from reasonlab.sweep.runner import finished_rows

    for run in sweep_dir.iterdir():
        shutil.rmtree(run / "checkpoints", ignore_errors=True)
    rows = finished_rows(sweep_configs(study.spec("cpu"), overrides=tiny)[0], sweep_dir)
    assert len(rows) == 6
    assert summary.endswith("\n".join(report_lines(runs_table(rows, study.plans["cpu"]))) + "\n")
