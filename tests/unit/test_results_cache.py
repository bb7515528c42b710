"""``results.parquet`` is a cache of the run directories, checked against them on every read: a row edited by hand,
a phantom row, a row whose run folder is gone or whose files changed is never served; a run whose metrics file is
cut short is in no answer. The check reads no summary again while every row holds, and holds after a copy. A sweep
rerun over a finished grid on a store that cannot be written writes nothing and prints the table."""

from __future__ import annotations

import json
import os
import shutil

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml
from conftest import tiny_run_dict
from test_reliability import _cli, _copy, small_sweep  # noqa: F401 - small_sweep is a fixture

from reasonlab.sweep import results
from reasonlab.sweep.results import RESULTS, read_results, write_results
from reasonlab.sweep.sql_query import query


def _bound(small_sweep, tmp_path):  # noqa: F811
    """A copy of the sweep whose table carries its bindings, and its two run directories."""
    store, cfgs, _ = _copy(small_sweep, tmp_path)
    write_results(store / "s")
    return store, *(store / "s" / c.run_id() for c in cfgs)


def _rewrite(sweep, change) -> None:
    """The stored table's rows changed by ``change`` and written back with its schema (and so its metadata)."""
    table = pq.read_table(sweep / RESULTS)
    rows = table.to_pylist()
    change(rows)
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), sweep / RESULTS)


def _labels(sweep) -> dict[str, str]:
    return {r["run_id"]: r["label"] for r in read_results(sweep)}


def _summary_labels(*runs) -> dict[str, str]:
    return {r.name: json.loads((r / "summary.json").read_text())["label"] for r in runs}


def test_an_edited_or_phantom_row_is_not_served(small_sweep, tmp_path, capsys):  # noqa: F811
    store, run, other = _bound(small_sweep, tmp_path)
    truth = _summary_labels(run, other)

    def tamper(rows):
        rows[0]["label"] = "HACKED"
        rows.append(dict(rows[1], run_id="abcdefabcdef", label="PHANTOM"))

    _rewrite(store / "s", tamper)
    assert _labels(store / "s") == truth
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{store / 's' / RESULTS}: 2 rows out of date with the run directories" in err
    _, rows = query(store / "s", "SELECT run_id, label FROM runs ORDER BY run_id")
    assert dict(rows) == truth
    shown = _cli("results", store / "s")
    assert shown.exit_code == 0 and "HACKED" not in shown.output and "PHANTOM" not in shown.output


def test_a_deleted_run_folder_or_a_changed_run_is_answered_from_the_runs(small_sweep, tmp_path, capsys):  # noqa: F811
    store, run, other = _bound(small_sweep, tmp_path)
    summary = json.loads((other / "summary.json").read_text())
    (other / "summary.json").write_text(json.dumps(summary, indent=1))  # the same run, its file rewritten
    shutil.rmtree(run)
    assert _labels(store / "s") == _summary_labels(other)
    assert "1 row out of date" in capsys.readouterr().err
    _, rows = query(store / "s", "SELECT DISTINCT run_id FROM metrics")
    assert rows == [(other.name,)]


def test_a_run_whose_metrics_are_cut_short_is_in_no_answer(small_sweep, tmp_path):  # noqa: F811
    """Plain `results`, SQL and a sweep rerun alike: the rerun is one line naming the file, exit 2, nothing
    written."""
    store, run, other = _bound(small_sweep, tmp_path)
    metrics = run / "metrics.parquet"
    metrics.write_bytes(metrics.read_bytes()[:-200])
    for args in (["results", store / "s"], ["results", store, "--sql", "SELECT run_id FROM runs"]):
        result = _cli(*args)
        assert result.exit_code == 0 and other.name in result.output, result.output
        assert run.name not in result.output.replace(str(run), ""), result.output
        assert [line for line in result.output.splitlines() if str(metrics) in line] == [
            f"{metrics}: damaged metrics file (ArrowInvalid); rerun the run; skipped"]
    before = {p: p.stat().st_mtime_ns for p in store.rglob("*")}
    result = _cli("sweep", _spec(tmp_path), "--out", store, "--workers", "1")
    assert result.exit_code == 2 and f"error: {metrics}: damaged metrics file" in result.output, result.output
    assert {p: p.stat().st_mtime_ns for p in store.rglob("*")} == before


def test_rows_that_hold_are_served_without_reading_their_summaries_again(small_sweep, tmp_path,  # noqa: F811
                                                                         monkeypatch):
    """The check reads each run's summary bytes and metrics footer, not the summary's schema and run identity: only a
    run whose files changed is read in full. Bound by content, the rows hold in a copy of the sweep (new times)."""
    store, run, other = _bound(small_sweep, tmp_path)
    copy = shutil.copytree(store, tmp_path / "copy")
    read = []
    real = results.load_run
    monkeypatch.setattr(results, "load_run", lambda run_dir: read.append(run_dir.name) or real(run_dir))
    expected = read_results(store / "s")
    assert read_results(copy / "s") == expected and read == []
    (copy / "s" / run.name / "summary.json").write_text((run / "summary.json").read_text() + "\n")
    assert read_results(copy / "s") == expected and read == [run.name]


def _spec(tmp_path):
    base = tiny_run_dict(train={**tiny_run_dict()["train"], "epochs": 1})
    base["train"].pop("threads")
    spec = tmp_path / "s.yaml"
    spec.write_text(yaml.safe_dump({"name": "s", "config": base, "grid": {"seed": [1, 2]}}))
    return spec


@pytest.mark.parametrize("bound", [True, False], ids=["bound-table", "older-table"])
def test_a_sweep_rerun_of_a_finished_grid_on_a_read_only_store_writes_nothing(small_sweep, tmp_path,  # noqa: F811
                                                                              monkeypatch, bound):
    """As a read-only mount reports it through ``os.access`` (root may write anywhere else): the rerun prints the
    table and exits 0, every file as it was, no lock, no temp file; an older table without bindings is answered
    from the runs."""
    store, cfgs, _ = _copy(small_sweep, tmp_path)
    if bound:
        write_results(store / "s")
    shutil.rmtree(store / "s" / ".locks", ignore_errors=True)
    before = {p: p.stat().st_mtime_ns for p in store.rglob("*")}
    writable = os.access
    monkeypatch.setattr(os, "access", lambda path, mode, **kw: mode != os.W_OK and writable(path, mode, **kw))
    result = _cli("sweep", _spec(tmp_path), "--out", store, "--workers", "1")
    assert result.exit_code == 0, result.output
    assert f"{store / 's'}: read-only; every run is finished, so nothing is written" in result.output
    assert all(c.run_id() in result.output for c in cfgs)
    assert {p: p.stat().st_mtime_ns for p in store.rglob("*")} == before


def test_a_table_written_before_any_run_finishes_reads_without_a_word(tmp_path, capsys):
    """A sweep stopped before its first run ends writes a table of no rows; reading it says nothing (it is a
    results table with its run_id column), and the runs that finish later are added to it."""
    sweep = tmp_path / "s"
    sweep.mkdir()
    write_results(sweep)
    assert pq.read_table(sweep / RESULTS).column_names == ["run_id"]
    assert read_results(sweep) == []
    assert capsys.readouterr().err == ""
