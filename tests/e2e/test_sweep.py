"""Sweeps: grid parsing and expansion, the local executor, resume and kill, the results table, SQL, phase cells.

Over 400 lines: a sweep's whole life (grid, executor, resume, kills, results table, SQL, live progress) on one tiny
config.
"""

from __future__ import annotations

import csv
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml
from conftest import anchor_phase_row as _row
from conftest import tiny_run, tiny_run_dict
from typer.testing import CliRunner

from reasonlab.cli import app
from reasonlab.config import ConfigError, ThresholdConfig
from reasonlab.kinds.anchor.cells import phase_cells
from reasonlab.records import finished_runs, run_dirs
from reasonlab.store import unfinished_runs
from reasonlab.sweep.executors import LocalExecutor, split_cores
from reasonlab.sweep.grid import SweepSpec, expand, load_sweep, parse_axis, split_top_level, sweep_configs
from reasonlab.sweep.results import read_results, table_view, write_results
from reasonlab.sweep.runner import run_sweep
from reasonlab.sweep.sql_query import query
from reasonlab.train.run import train_run

runner = CliRunner()


def tiny_spec(**grid) -> SweepSpec:
    base = tiny_run_dict(train={"epochs": 2})
    base["train"].pop("threads")
    return SweepSpec(name="tiny", config=base, grid=grid or {"init.gamma": [0.3, 0.8], "seed": [1, 2]})


# ---- grids ----------------------------------------------------------------------------------------------------
def test_split_top_level_keeps_brackets_together():
    assert split_top_level("0.3, 0.5,0.7") == ["0.3", "0.5", "0.7"]
    assert split_top_level("[[4,3]],[[3,4],[1,2]]") == ["[[4,3]]", "[[3,4],[1,2]]"]
    assert split_top_level("{qk: 0.9, mlp: 1},{}") == ["{qk: 0.9, mlp: 1}", "{}"]


def test_parse_axis_types_values():
    assert parse_axis("init.gamma=0.3,0.5") == ("init.gamma", [0.3, 0.5])
    assert parse_axis("task.held_out_pairs=[[4,3]],[[3,4]]") == ("task.held_out_pairs", [[[4, 3]], [[3, 4]]])
    assert parse_axis("task.split=true,false") == ("task.split", [True, False])


@pytest.mark.parametrize("bad", ["init.gamma", "=0.3", "init.gamma=", "init.gamma=0.3,,0.5"])
def test_parse_axis_rejects_malformed(bad):
    with pytest.raises(ConfigError, match="--grid"):
        parse_axis(bad)


def test_expand_is_the_product_and_dedupes_by_run_id():
    base = tiny_run_dict()
    cfgs = expand(base, {"init.gamma": [0.3, 0.5, 0.7], "model.depth": [1, 2], "seed": [1, 2]})
    assert len(cfgs) == 12 and len({c.run_id() for c in cfgs}) == 12
    assert {(c.init.gamma, c.model.depth, c.seed) for c in cfgs} == {
        (g, d, s) for g in (0.3, 0.5, 0.7) for d in (1, 2) for s in (1, 2)}
    same = expand(base, {"init.gamma": [0.5, 0.50], "train.threads": [1, 2]})  # threads are not hashed
    assert len(same) == 1


def test_expand_names_the_bad_point_and_field():
    with pytest.raises(ConfigError, match=r"grid point \(init.gamma=\"x\"\): init.gamma"):
        expand(tiny_run_dict(), {"init.gamma": [0.5, "x"]})
    with pytest.raises(ConfigError, match="model.depht: unknown field"):
        expand(tiny_run_dict(), {"model.depht": [1]})
    with pytest.raises(ConfigError, match="no values"):
        expand(tiny_run_dict(), {"seed": []})


def test_sweep_file_layers_and_cli_axes(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump({"family": "anchor", "profile": "cpu", "config": {"train": {"epochs": 3}},
                                    "set": ["train.epochs=5"], "grid": {"seed": [1, 2]}}))
    spec = load_sweep(path)
    assert spec.name == "s"
    cfgs, axes = sweep_configs(spec, ["init.gamma=0.3,0.9"], ["model.depth=3"])
    assert axes == ["seed", "init.gamma"] and len(cfgs) == 4
    assert {c.train.epochs for c in cfgs} == {5} and {c.model.depth for c in cfgs} == {3}
    assert {c.model.d_model for c in cfgs} == {128} and cfgs[0].profile.startswith("anchor-cpu")


def test_bad_sweep_file_names_file_and_field(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text("grid: {seed: 3}\n")
    with pytest.raises(ConfigError, match=r"s.yaml: grid.seed"):
        load_sweep(path)


def test_split_cores():
    assert split_cores(30, cores=2) == (2, 1)
    assert split_cores(1, cores=2) == (1, 2)  # a lone run gets both cores
    assert split_cores(8, workers=1, cores=4) == (1, 4)
    assert split_cores(8, threads=2, cores=4) == (4, 2)


# ---- running ---------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def finished_sweep(tmp_path_factory):
    out = tmp_path_factory.mktemp("store")
    cfgs, axes = sweep_configs(tiny_spec())
    report = run_sweep("tiny", cfgs, out, LocalExecutor(2, 1), axes)
    return out, cfgs, report


@pytest.mark.slow
def test_sweep_runs_every_point_once(finished_sweep):
    out, cfgs, report = finished_sweep
    assert report.total == 4 and report.skipped == 0 and not report.failed
    rows = read_results(out / "tiny")
    assert sorted(r["run_id"] for r in rows) == sorted(c.run_id() for c in cfgs)
    assert {(r["init.gamma"], r["seed"]) for r in rows} == {(0.3, 1), (0.3, 2), (0.8, 1), (0.8, 2)}
    assert all(r["label"] in {"inferential", "symmetric", "other", "not-fitted"} for r in rows)
    assert not unfinished_runs(out / "tiny")
    assert json.loads((out / "tiny" / "sweep.json").read_text())["axes"] == ["init.gamma", "seed"]


@pytest.mark.slow
def test_rerun_skips_finished_runs(finished_sweep):
    out, cfgs, _ = finished_sweep
    before = {p: p.stat().st_mtime_ns for p in (out / "tiny").rglob("summary.json")}
    report = run_sweep("tiny", cfgs, out, LocalExecutor(2, 1), ["init.gamma", "seed"])
    assert report.skipped == 4 and report.outcomes == []
    assert {p: p.stat().st_mtime_ns for p in (out / "tiny").rglob("summary.json")} == before


@pytest.mark.slow
def test_ensemble_sweep_gives_the_same_runs(finished_sweep, tmp_path):
    """Grouped into stacked ensembles of two, the sweep lands the same runs, one row each, with the same labels
    and (to float tolerance) the same figures as the sweep that trained every run alone."""
    out, cfgs, _ = finished_sweep
    report = run_sweep("tiny", cfgs, tmp_path, LocalExecutor(1, 1, ensemble=2), ["init.gamma", "seed"])
    assert len(report.outcomes) == 4 and not report.failed
    alone = {r["run_id"]: r for r in read_results(out / "tiny")}
    stacked = read_results(tmp_path / "tiny")
    assert sorted(r["run_id"] for r in stacked) == sorted(alone)
    for row in stacked:
        ref = alone[row["run_id"]]
        assert row["label"] == ref["label"]
        for key in ("final.seen_test_acc", "outcome.4-3.inferential"):
            assert row[key] == pytest.approx(ref[key], abs=0.02), key


@pytest.mark.slow
def test_results_table_is_rebuilt_from_runs(finished_sweep, tmp_path):
    out, _, _ = finished_sweep
    table = pq.read_table(out / "tiny" / "results.parquet")
    assert table.num_rows == 4
    for col in ("run_id", "label", "init.gamma", "model.d_model", "final.seen_test_acc", "outcome.4-3.inferential",
                "outcome.4-3.symmetric", "task.anchors", "git_revision"):
        assert col in table.column_names
    columns, rows = table_view(out / "tiny")
    assert columns[:4] == ["run_id", "init.gamma", "seed", "label"] and len(rows) == 4


@pytest.mark.slow
def test_sql_views(finished_sweep):
    out, cfgs, _ = finished_sweep
    cols, rows = query(out, 'SELECT sweep, "init.gamma", count(*) FROM runs GROUP BY ALL ORDER BY 2')
    assert cols[0] == "sweep" and rows == [("tiny", 0.3, 2), ("tiny", 0.8, 2)]
    _, rows = query(out / "tiny", "SELECT DISTINCT run_id FROM metrics ORDER BY 1")
    assert [r[0] for r in rows] == sorted(c.run_id() for c in cfgs)
    _, rows = query(out / "tiny", "SELECT run_id, sum(count) FROM offsets WHERE set = 'heldout/4-3/train_keys' "
                                  "GROUP BY 1")
    assert len(rows) == 4 and len({r[1] for r in rows}) == 1  # every run scored the same set


@pytest.mark.slow
def test_bad_sql_and_missing_dir_are_one_line_errors(finished_sweep, tmp_path):
    out, _, _ = finished_sweep
    with pytest.raises(ConfigError, match=r"^--sql: .*\n?$"):
        query(out, "SELEC 1")
    result = runner.invoke(app, ["results", str(out / "tiny"), "--sql", "SELECT nope FROM runs"])
    assert result.exit_code == 2 and "--sql" in result.output
    result = runner.invoke(app, ["results", str(tmp_path / "missing")])
    assert result.exit_code == 2 and "no such directory" in result.output


ESCAPES = [
    "SELECT * FROM read_csv('/etc/passwd')",  # files outside the store
    "SELECT * FROM glob('/etc/*')",
    "SELECT * FROM read_text('{summary}')",  # files inside it, past the loaded tables
    "COPY runs TO '{summary}' (FORMAT csv)",  # writes, over a run's own summary
    "ATTACH '{tmp}/other.db' AS other",
    "INSTALL httpfs",
    "LOAD httpfs",
    "SET enable_external_access = true",
    "SELECT 1; SELECT * FROM read_csv('/etc/passwd')",  # a second statement
    "CREATE TABLE t AS SELECT 1",
    "DROP VIEW runs",
]


def _confined(out: Path, tmp_path: Path, sql: str) -> None:
    """``sql`` over the store ``out`` is refused in one line, by the API and the command, and changes nothing."""
    summary = next((out / "tiny").glob("*/summary.json"))
    before = summary.read_bytes()
    with pytest.raises(ConfigError, match=r"^--sql: [^\n]+$"):
        query(out, sql.format(summary=summary, tmp=tmp_path))
    assert summary.read_bytes() == before and list(tmp_path.iterdir()) == []
    result = runner.invoke(app, ["results", str(out), "--sql", sql.format(summary=summary, tmp=tmp_path)])
    assert result.exit_code == 2 and len(result.output.strip().splitlines()) == 1, result.output
    assert summary.read_bytes() == before


@pytest.mark.slow
@pytest.mark.parametrize("sql", ESCAPES)
def test_sql_is_one_select_confined_to_the_store(finished_sweep, tmp_path, sql):
    _confined(finished_sweep[0], tmp_path, sql)


@pytest.fixture(scope="module")
def one_run_store(tmp_path_factory) -> Path:
    """A store of one tiny run trained in process for a few steps: the fast tier's store to query."""
    out = tmp_path_factory.mktemp("one")
    train_run(tiny_run(train={"epochs": 1}), out / "tiny", progress=False, log=lambda _: None)
    write_results(out / "tiny")
    return out


@pytest.mark.parametrize("sql", ESCAPES)
def test_sql_is_confined_in_a_store_of_one_run(one_run_store, tmp_path, sql):
    _confined(one_run_store, tmp_path, sql)


@pytest.mark.slow
def test_results_cli_and_csv(finished_sweep, tmp_path):
    out, _, _ = finished_sweep
    csv_path = tmp_path / "r.csv"
    result = runner.invoke(app, ["results", str(out / "tiny"), "--csv", str(csv_path)])
    assert result.exit_code == 0, result.output
    lines = csv_path.read_text().splitlines()
    assert lines[0].startswith("run_id,init.gamma,seed,label") and len(lines) == 5


@pytest.mark.slow
def test_results_csv_goes_to_standard_output_and_never_replaces_what_is_not_a_file(finished_sweep, tmp_path):
    """--csv - prints the CSV alone (a pipe can take it); a path that is a device, a pipe, a link or a folder is
    refused in one line and left as it was, where a rename would have replaced it."""
    out, _, _ = finished_sweep
    result = runner.invoke(app, ["results", str(out / "tiny"), "--csv", "-"])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[0].startswith("run_id,init.gamma,seed,label") and "wrote" not in result.output
    target = tmp_path / "kept.csv"
    target.write_text("mine")
    link, fifo, folder = tmp_path / "link.csv", tmp_path / "fifo", tmp_path / "folder"
    link.symlink_to(target)
    os.mkfifo(fifo)
    folder.mkdir()
    for path in (link, fifo, folder, Path("/dev/null")):
        result = runner.invoke(app, ["results", str(out / "tiny"), "--csv", str(path)])
        assert result.exit_code == 2 and "is not a regular file" in result.output, (path, result.output)
    assert link.is_symlink() and target.read_text() == "mine" and fifo.is_fifo() and Path("/dev/null").is_char_device()
    both = runner.invoke(app, ["results", str(out / "tiny"), "--csv", "-", "--markdown", "-"])
    assert both.exit_code == 2 and "only one of them" in both.output


@pytest.mark.slow
def test_results_markdown_is_the_printed_table(finished_sweep, tmp_path):
    """--markdown writes the same rows and cells as the CSV, as a Markdown table a doc can hold verbatim."""
    out, _, _ = finished_sweep
    md, csv_path = tmp_path / "r.md", tmp_path / "r.csv"
    result = runner.invoke(app, ["results", str(out / "tiny"), "--markdown", str(md), "--csv", str(csv_path)])
    assert result.exit_code == 0, result.output
    lines = md.read_text().splitlines()
    rows = list(csv.reader(csv_path.read_text().splitlines()))
    assert lines[0] == "| " + " | ".join(rows[0]) + " |" and set(lines[1]) == set("-|")
    assert len(lines) == len(rows) + 1 == 6
    cells = [[c.strip() for c in line.strip("|").split(" | ")] for line in lines[2:]]
    assert [c[0] for c in cells] == [r[0] for r in rows[1:]]  # run ids, same order
    labels = rows[0].index("label")
    assert [c[labels] for c in cells] == [r[labels] for r in rows[1:]]
    bad = runner.invoke(app, ["results", str(out / "tiny"), "--markdown", str(tmp_path / "no" / "r.md")])
    assert bad.exit_code == 2 and "--markdown" in bad.output and not (tmp_path / "no").exists()


@pytest.mark.slow
def test_two_sweeps_on_one_store(tmp_path):
    """Two sweeps sharing a run (and a table) at once: every run trained once, both tables whole."""
    spec = tiny_spec(**{"init.gamma": [0.3, 0.8]})
    procs = []
    for seeds in ("1,2", "2,3"):
        path = tmp_path / f"s{seeds[0]}.yaml"
        path.write_text(yaml.safe_dump(spec.model_dump(mode="json")))
        procs.append(subprocess.Popen([sys.executable, "-m", "reasonlab", "sweep", str(path), "--name", "shared",
                                       "--grid", f"seed={seeds}", "--out", str(tmp_path / "store"), "--workers", "1"],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.PIPE))
    for p in procs:
        assert p.wait(timeout=300) == 0, p.stderr.read().decode()[-2000:]
    rows = read_results(tmp_path / "store" / "shared")
    assert len(rows) == 6 and len({r["run_id"] for r in rows}) == 6
    starts = [line for d in finished_runs(tmp_path / "store" / "shared")
              for line in (d / "events.log").read_text().splitlines() if " start run " in line]
    assert len(starts) == 6  # the two runs both sweeps asked for were trained once


def _sweep_in_background(tmp_path, epochs: int, until) -> tuple[subprocess.Popen, list[str], Path]:
    """A 6-run tiny sweep with 2 workers in its own session, returned once ``until(sweep_dir)`` holds."""
    spec = tiny_spec(**{"init.gamma": [0.3, 0.5, 0.8], "seed": [1, 2]})
    data = spec.model_dump(mode="json")
    data["config"]["train"].update(epochs=epochs, checkpoint_every=1)
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(data))
    cmd = [sys.executable, "-m", "reasonlab", "sweep", str(path), "--out", str(tmp_path / "store"),
           "--workers", "2"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    sweep_dir = tmp_path / "store" / "tiny"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not until(sweep_dir):
        time.sleep(0.05)
    return proc, cmd, sweep_dir


@pytest.mark.slow
def test_sigkill_mid_sweep_then_rerun_completes(tmp_path):
    proc, cmd, sweep_dir = _sweep_in_background(
        tmp_path, 6, lambda d: finished_runs(d) and unfinished_runs(d))
    os.killpg(proc.pid, signal.SIGKILL)  # the sweep and its workers, mid-run
    proc.wait()
    assert unfinished_runs(sweep_dir), "the kill should land while a run is unfinished"
    done = subprocess.run(cmd, capture_output=True, timeout=300)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    rows = read_results(sweep_dir)
    assert len(rows) == 6 and len({r["run_id"] for r in rows}) == 6
    assert not unfinished_runs(sweep_dir)
    for d in finished_runs(sweep_dir):
        json.loads((d / "summary.json").read_text())
        pq.read_table(d / "metrics.parquet")


@pytest.mark.slow
def test_killing_the_sweep_process_alone_takes_its_workers_with_it(tmp_path):
    """SIGKILL to the sweep's own process only (not its group): the pool workers must not train on as orphans."""
    proc, _, _ = _sweep_in_background(tmp_path, 40, lambda d: len(unfinished_runs(d)) >= 2)

    def workers() -> list[int]:
        out = subprocess.run(["pgrep", "-g", str(proc.pid)], capture_output=True, text=True).stdout.split()
        return [int(p) for p in out if int(p) != proc.pid]

    try:
        assert workers(), "the sweep should have started its workers"
        proc.kill()
        proc.wait()
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and workers():
            time.sleep(0.1)
        assert workers() == []
    finally:
        subprocess.run(["pkill", "-9", "-g", str(proc.pid)], capture_output=True)  # whatever is left


# ---- phase cells -----------------------------------------------------------------------------------------------
def test_phase_cells_best_over_lr_then_mean_over_seeds():
    rows = [_row(0.5, 2, 1, 10, 0.2, 0.7, 0.95), _row(0.5, 2, 1, 20, 0.1, 0.9, 0.99),
            _row(0.5, 2, 2, 10, 0.0, 0.5, 0.97), _row(0.5, 2, 2, 20, 0.3, 0.3, 0.93),
            _row(0.8, 2, 1, 10, 0.9, 0.0, 0.80), _row(0.8, 2, 2, 10, 0.8, 0.1, 0.85)]
    a, b = phase_cells(rows, "4-3")
    assert (a.x, a.y, a.n_seeds, a.n_runs) == (0.5, 2, 2, 4)
    assert a.inferential == pytest.approx((0.2 + 0.3) / 2) and a.symmetric == pytest.approx((0.9 + 0.5) / 2)
    assert a.seen == pytest.approx((0.99 + 0.97) / 2) and a.label == "symmetric" and not a.clean and not a.shadow
    assert b.shadow and b.label == "not-fitted" and b.inferential == pytest.approx(0.85)
    assert phase_cells(rows, "4-3", th=ThresholdConfig(fit=0.8))[1].label == "inferential"


def test_phase_cells_refuse_a_hidden_axis():
    rows = [_row(0.5, 2, 1, 10, 0.2, 0.7, 0.95), _row(0.5, 2, 1, 10, 0.9, 0.0, 0.95, **{"train.weight_decay": 1.0})]
    with pytest.raises(ConfigError, match="train.weight_decay varies"):
        phase_cells(rows, "4-3")
    with pytest.raises(ConfigError, match="outcome.3-4.inferential"):
        phase_cells(rows[:1], "3-4")


@pytest.mark.slow
def test_phase_cli_writes_figures(finished_sweep):
    out, _, _ = finished_sweep
    result = runner.invoke(app, ["phase", str(out / "tiny"), "--y", "seed"])
    assert result.exit_code == 0, result.output
    assert (out / "tiny" / "figures" / "phase.png").stat().st_size > 10_000
    assert (out / "tiny" / "figures" / "phase.svg").read_text().lstrip().startswith("<?xml")


def test_sweep_cli_bad_grid_writes_nothing(tmp_path):
    result = runner.invoke(app, ["sweep", "--profile", "anchor-cpu", "--grid", "init.gama=0.3,0.5", "--out",
                                 str(tmp_path)])
    assert result.exit_code == 2 and "init.gama: unknown field" in result.output
    assert list(tmp_path.iterdir()) == []


def test_write_results_on_empty_sweep(tmp_path):
    (tmp_path / "s").mkdir()
    write_results(tmp_path / "s")
    assert read_results(tmp_path / "s") == []


def test_a_partial_run_with_its_summary_is_not_finished(tmp_path):
    """A worker writes summary.json inside ``<id>.partial`` just before renaming it; a table rebuild running in
    that moment must not list the partial directory (it would vanish under the reader)."""
    for name in ("0123456789ab", "fedcba987654.partial"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "summary.json").write_text("{}")
    assert [p.name for p in run_dirs(tmp_path)] == ["0123456789ab"]  # by name; finished_runs also reads it
    assert [p.name for p in unfinished_runs(tmp_path)] == ["fedcba987654.partial"]


def test_reproduce_rejects_unknown_experiment_and_profile(tmp_path):
    result = runner.invoke(app, ["reproduce", "anchor-phaze", "--out", str(tmp_path)])
    assert result.exit_code == 2 and "anchor-phase" in result.output
    result = runner.invoke(app, ["reproduce", "anchor-phase", "--profile", "gpu", "--out", str(tmp_path)])
    assert result.exit_code == 2 and "cpu, cpu-wide, cpu-wide-wd, cpu-wide-cell, cpu-wide-long, paper" in result.output
    # --seeds on a study that takes none, or not a list of seeds: one line, nothing written
    result = runner.invoke(app, ["reproduce", "prontoqa-tinystories", "--seeds", "1", "--out", str(tmp_path)])
    assert result.exit_code == 2 and "--seeds" in result.output and "Traceback" not in result.output
    result = runner.invoke(app, ["reproduce", "anchor-lr-wd", "--seeds", "1,x", "--out", str(tmp_path)])
    assert result.exit_code == 2 and "'1,x' is not a list of distinct non-negative integers" in result.output
    assert list(tmp_path.iterdir()) == []


def test_reproduce_seeds_replace_the_arms_and_keep_run_ids(tmp_path):
    """``--seeds`` replaces the arm's seed axis: the arm's runs of those seeds keep their ids, others are added."""
    from reasonlab.studies import reasoning_bias
    from reasonlab.studies.anchor.study import LR_WD

    def planned(args: list[str]) -> list[str]:
        result = runner.invoke(app, ["reproduce", *args, "--dry-run", "--out", str(tmp_path)])
        assert result.exit_code == 0, result.output
        return re.findall(r"^  ([0-9a-f]{12}) ", result.output, flags=re.M)

    arm = {c.run_id(): c.seed for c in sweep_configs(LR_WD.spec("cpu"))[0]}
    one = planned(["anchor-lr-wd", "--seeds", "1"])
    assert len(one) == 9 and set(one) == {r for r, s in arm.items() if s == 1}
    four = planned(["anchor-lr-wd", "--seeds", "1,2,3,4"])
    assert len(four) == 36 and set(arm) < set(four)
    mixture = planned(["reasoning-bias", "--seeds", "2"])  # 2 models × 2 γ, then the two Fig. 8 runs at seed 2
    assert set(mixture) == {c.run_id() for c in reasoning_bias.study_configs("cpu", seeds=[2])}
    assert len(mixture) == 6 and not list(tmp_path.iterdir())


def test_phase_cells_over_epochs_and_seed_ranges():
    """The max-over-epochs switch reads each run's best held-out accuracies; cells keep the range over seeds."""
    best = "best.heldout.4-3.train_keys."
    rows = [_row(0.8, 2, 1, 10, 0.1, 0.0, 0.95, **{best + "inferential": 0.9, best + "symmetric": 0.05}),
            _row(0.8, 2, 2, 10, 0.5, 0.1, 0.97, **{best + "inferential": 0.7, best + "symmetric": 0.1})]
    final, = phase_cells(rows, "4-3")
    assert final.inferential == pytest.approx(0.3) and final.inferential_range == (0.1, 0.5)
    assert final.label == "other" and final.symmetric_range == (0.0, 0.1)
    epochs, = phase_cells(rows, "4-3", over_epochs=True)
    assert epochs.inferential == pytest.approx(0.8) and epochs.inferential_range == (0.7, 0.9)
    assert epochs.label == "inferential" and epochs.seen == pytest.approx(0.96)
    with pytest.raises(ConfigError, match="best.heldout.4-3.train_keys.inferential"):
        phase_cells([_row(0.8, 2, 1, 10, 0.1, 0.0, 0.95)], "4-3", over_epochs=True)


@pytest.mark.slow
def test_phase_cli_over_epochs_names_its_protocol(finished_sweep):
    out, _, _ = finished_sweep
    result = runner.invoke(app, ["phase", str(out / "tiny"), "--y", "seed", "--over-epochs"])
    assert result.exit_code == 0, result.output
    svg = (out / "tiny" / "figures" / "phase-over-epochs.svg").read_text()
    assert "max over evaluated epochs" in svg


def test_without_a_terminal_a_sweep_prints_a_plain_line_when_its_runs_move_on(tmp_path):
    """Piped or under nohup there is no live table: a plain line with the sweep's state and each running run's
    step, speed, ETA, loss and last evaluation (its kind's progress parts), at most every ``line_every`` seconds
    and only when a run moved on. A progress file an earlier invocation left does not make its run count as running."""
    import io
    import json

    from rich.console import Console

    from reasonlab.config import resolve
    from reasonlab.records import write_progress
    from reasonlab.sweep.runner import Monitor

    cfg = resolve(tiny_run_dict())
    ids = {cfg.run_id()}
    buffer = io.StringIO()
    monitor = Monitor("s", tmp_path, [cfg], ["init.gamma"], 0, 1, Console(file=buffer, width=200))
    assert not monitor.live
    partial = tmp_path / f"{cfg.run_id()}.partial"
    partial.mkdir()
    write_progress(partial, epoch=0, epochs=3, step=4, steps=30, loss=1.5, wall_time_s=1.0)
    os.utime(partial / "progress.json", (monitor.since - 60, monitor.since - 60))  # left by an earlier sweep
    monitor.report_progress(ids)
    assert "0 running" in monitor.headline(monitor.running(ids), ids) and buffer.getvalue() == ""
    monitor.line_every = 0.0
    for step in (5, 5, 12):
        write_progress(partial, epoch=step // 10, epochs=3, step=step, steps=30, steps_per_s=2.0, eta_s=9.0,
                       loss=1.5, wall_time_s=1.0, evaluated_epoch=1 if step > 10 else None,
                       figures={"seen_test_acc": 0.25} if step > 10 else {})
        monitor.report_progress(ids)
    write_progress(partial, epoch=3, epochs=3, step=30, steps=30, loss=float("nan"), wall_time_s=1.0,
                   diverged_step=25)
    monitor.report_progress(ids)
    (partial / "progress.json").write_text(json.dumps({"epoch": 4, "epochs": 3, "loss": 1.0}))  # not the store's
    monitor.report_progress(ids)
    monitor.line_every = 60.0
    write_progress(partial, epoch=3, epochs=3, step=29, steps=30, loss=1.0, wall_time_s=1.0)
    monitor.report_progress(ids)  # too soon after the last line
    monitor.render(ids)
    lines = buffer.getvalue().splitlines()
    assert len(lines) == 3, lines
    assert "1 running" in lines[0] and "ETA 0m09s" in lines[0]  # all runs train: the slowest one's ETA
    assert f"{cfg.run_id()} · anchor · profile custom · init.gamma=0.5 model.depth=2 seed=1 · 4 epochs: epoch 0/3 " \
           "step 5/30 (2.0/s, ETA 0m09s) loss 1.500" in lines[0]  # the run in one line (describe_run)
    assert lines[1].endswith("epoch 1/3 step 12/30 (2.0/s, ETA 0m09s) loss 1.500 seen_test_acc 0.25")  # the kind's
    assert "epoch 3/3 step 30/30 (—/s, ETA ?) loss diverged" in lines[2]


def test_the_sweeps_eta_counts_only_the_work_of_this_invocation(tmp_path, monkeypatch):
    """A sweep rerun after a stop, one run resumed at half its steps and one queued: the half done before is not
    work of this invocation's first seconds (it once read "ETA 6m" for ten hours of work left)."""
    import io

    from rich.console import Console

    from reasonlab.config import resolve
    from reasonlab.records import write_progress
    from reasonlab.sweep import runner

    first, second = (resolve(tiny_run_dict() | {"seed": s}) for s in (1, 2))
    clock = [1000.0]
    monkeypatch.setattr(runner.time, "monotonic", lambda: clock[0])
    monitor = runner.Monitor("s", tmp_path, [first, second], ["seed"], 0, 2, Console(file=io.StringIO()))
    pending = {first.run_id(), second.run_id()}
    partial = tmp_path / f"{first.run_id()}.partial"
    partial.mkdir()
    write_progress(partial, epoch=2, epochs=4, step=500, steps=1000, steps_per_s=1.0, eta_s=500.0, loss=1.0,
                   wall_time_s=1.0)
    clock[0] += 24.0
    assert monitor.eta(monitor.running(pending), pending) is None  # nothing done here yet: no rate to go by
    write_progress(partial, epoch=2, epochs=4, step=600, steps=1000, steps_per_s=1.0, eta_s=400.0, loss=1.0,
                   wall_time_s=1.0)
    clock[0] += 76.0  # 100 s for 100 steps: 400 steps of this run and 1,000 of the queued one are left
    assert monitor.eta(monitor.running(pending), pending) == pytest.approx(1400.0)
