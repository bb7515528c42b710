"""The store reads only what it wrote, through its own directories, and shows stored strings as they are.

Files that parse but hold the wrong shapes (a number stored as text, an outcome pair without its fields, no
``versions``, ``config.model`` a list, sweep axes that are not a list of names, text that is not UTF-8, a damaged
snapshot marker, a foreign Parquet table) are one line naming the file and what is wrong, then skipped; a run
directory is the run its config hashes to; no reader follows a link out of the run or sweep directory; markup and
terminal escapes in stored strings are printed as text.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import tiny_run_dict
from test_reliability import _cli, _copy, small_sweep  # noqa: F401 - small_sweep is a fixture

from reasonlab.errors import ConfigError, UserError
from reasonlab.records import finished_runs, read_summary
from reasonlab.sweep.executors import LocalExecutor
from reasonlab.sweep.results import read_results, sweep_axes, write_results
from reasonlab.sweep.runner import run_sweep
from reasonlab.sweep.sql_query import query

CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f]")


def _edit(path, change) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


SUMMARY_DAMAGE = {
    "number-as-text": (lambda s: s["final"].update(seen_test_acc="0.93"), "final.seen_test_acc"),
    "pair-without-fields": (lambda s: s["outcome"].update(pairs={"4-3": {}}), "outcome.pairs.4-3.label"),
    "no-versions": (lambda s: s.pop("versions"), "versions"),
    "model-a-list": (lambda s: s["config"].update(model=[1, 2]), "config"),
    "escape-key": (lambda s: s.update(escape={"somewhere": None}), "escape.somewhere"),
    "machine-without-cpu": (lambda s: s.update(machine={"kernels": "AVX2"}), "machine.cpu"),
    "not-text": (lambda s: s.update(label="\udcff"), "label: not Unicode text"),  # a JSON escape of no character
}


def _one_warning(output: str, path) -> None:
    """Exactly one line of the output names ``path``, and it is a single line."""
    lines = [line for line in output.splitlines() if str(path) in line]
    assert len(lines) == 1, output


@pytest.mark.slow
@pytest.mark.parametrize("damage", list(SUMMARY_DAMAGE))
def test_a_summary_of_the_wrong_shape_is_one_line_and_skipped(small_sweep, tmp_path, damage):  # noqa: F811
    store, cfgs, axes = _copy(small_sweep, tmp_path)
    run, other = (store / "s" / c.run_id() for c in cfgs)
    change, field = SUMMARY_DAMAGE[damage]
    _edit(run / "summary.json", change)
    with pytest.raises(UserError, match=re.escape(field)):
        read_summary(run / "summary.json")
    shown = _cli("show", run)
    assert shown.exit_code == 2 and len(shown.output.strip().splitlines()) == 1, shown.output
    assert "summary.json" in shown.output and field.split(".")[0] in shown.output
    for args in (["report", store / "s"], ["results", store / "s", "--sql", "SELECT count(*) FROM offsets"],
                 ["results", store], ["phase", store / "s"]):
        result = _cli(*args)
        assert result.exit_code == 0, (args, result.output)
        _one_warning(result.output, run / "summary.json")
    html = (store / "s" / "report.html").read_text()
    assert other.name in html and f'id="run-{run.name}"' not in html
    with pytest.raises(UserError, match=re.escape(f"{run / 'summary.json'}: not a run summary")):
        run_sweep("s", cfgs, store, LocalExecutor(1, 1), axes)  # a rerun neither trains it again nor passes it over
    assert [r["run_id"] for r in read_results(store / "s")] == [other.name]


DAMAGED = {"summary.json": b'{"run_id": ', "metrics.parquet": b"PAR1 cut short"}


@pytest.mark.parametrize("name", list(DAMAGED))
def test_a_skipped_run_is_in_no_answer(small_sweep, tmp_path, name):  # noqa: F811
    """A run whose summary or metrics cannot be read is reported as skipped and left out of every table: never served
    from the row the results table kept of it."""
    store, cfgs, _ = _copy(small_sweep, tmp_path)
    run, other = (store / "s" / c.run_id() for c in cfgs)
    (run / name).write_bytes(DAMAGED[name])
    sql = ("SELECT 'runs', run_id FROM runs UNION ALL SELECT DISTINCT 'metrics', run_id FROM metrics "
           "UNION ALL SELECT DISTINCT 'offsets', run_id FROM offsets")
    _, rows = query(store / "s", sql)
    assert {r for _, r in rows} == {other.name} and {t for t, _ in rows} >= {"runs", "metrics"}, rows
    for args in (["results", store, "--sql", sql], ["results", store]):
        result = _cli(*args)
        assert result.exit_code == 0 and other.name in result.output and run.name not in result.output.replace(
            str(run), ""), result.output
        _one_warning(result.output, run / name)


def test_a_sweep_rerun_over_a_damaged_summary_is_one_line_and_writes_nothing(small_sweep, tmp_path):  # noqa: F811
    import yaml

    store, cfgs, _ = _copy(small_sweep, tmp_path)
    run = store / "s" / cfgs[0].run_id()
    (run / "summary.json").write_text("{")
    base = tiny_run_dict(train={**tiny_run_dict()["train"], "epochs": 1})
    base["train"].pop("threads")
    spec = tmp_path / "s.yaml"
    spec.write_text(yaml.safe_dump({"name": "s", "config": base, "grid": {"seed": [1, 2]}}))
    before = {p: p.stat().st_mtime_ns for p in store.rglob("*")}
    result = _cli("sweep", spec, "--out", store, "--workers", "1")
    assert result.exit_code == 2 and f"{run / 'summary.json'}: damaged run summary" in result.output, result.output
    assert len([line for line in result.output.splitlines() if line.startswith("error:")]) == 1
    assert "Traceback" not in result.output and {p: p.stat().st_mtime_ns for p in store.rglob("*")} == before


@pytest.mark.slow
def test_a_run_copied_under_another_id_is_ignored_in_one_line(small_sweep, tmp_path, capsys):  # noqa: F811
    store, cfgs, _ = _copy(small_sweep, tmp_path)
    run, other = (store / "s" / c.run_id() for c in cfgs)
    phantom = store / "s" / "0123456789ab"
    shutil.copytree(run, phantom)
    assert finished_runs(store / "s") == sorted([run, other])
    assert "0123456789ab: holds run" in capsys.readouterr().err
    shutil.rmtree(other)
    shutil.copytree(run, other)  # now the other run's name holds this run: a duplicate row before
    _, rows = query(store / "s", "SELECT count(*), count(DISTINCT run_id) FROM metrics")
    assert rows[0][1] == 1  # the run once, not twice
    shown = _cli("show", other)
    assert shown.exit_code == 2 and "holds run" in shown.output and len(shown.output.strip().splitlines()) == 1
    partial = store / "s" / "0123456789ab.partial"  # an unfinished run under another id: show refuses it
    phantom.rename(partial)
    (partial / "summary.json").unlink()
    (partial / "progress.json").write_text(json.dumps({"epoch": 1, "epochs": 1, "step": 2, "loss": 1.0,
                                                       "wall_time_s": 1.0}))
    shown = _cli("show", partial)
    assert shown.exit_code == 2 and "holds run" in shown.output, shown.output


def test_sweep_json_and_summary_md_of_the_wrong_shape_or_not_utf8(small_sweep, tmp_path, capsys):  # noqa: F811
    store, cfgs, _ = _copy(small_sweep, tmp_path)
    sweep = store / "s"
    rows = read_results(sweep)
    for axes in ("seed", [1, 2], {"a": 1}):
        _edit(sweep / "sweep.json", lambda s, axes=axes: s.update(axes=axes))
        assert sweep_axes(sweep, rows) == ["seed"]  # read from the runs instead
        assert "sweep.json: not a sweep file" in capsys.readouterr().err
    (sweep / "sweep.json").write_bytes(b'{"name": "s\xff", "axes": ["seed"]}')
    (sweep / "summary.md").write_bytes(b"# s\n\xff\xfe not text\n")
    result = _cli("report", sweep)
    assert result.exit_code == 0, result.output
    _one_warning(result.output, sweep / "summary.md")
    _one_warning(result.output, sweep / "sweep.json")


def test_a_foreign_parquet_table_and_a_damaged_snapshot_marker(small_sweep, tmp_path, capsys):  # noqa: F811
    from reasonlab.checkpoint import snapshot_steps

    store, cfgs, _ = _copy(small_sweep, tmp_path)
    run, other = (store / "s" / c.run_id() for c in cfgs)
    pq.write_table(pa.table({"step": ["a", "b"], "x": [1, 2]}), run / "metrics.parquet")
    result = _cli("results", store / "s", "--sql", "SELECT count(DISTINCT run_id) FROM metrics")
    assert result.exit_code == 0 and result.output.splitlines()[:2] == ["count(DISTINCT run_id)", "1"], result.output
    _one_warning(result.output, run / "metrics.parquet")
    result = _cli("report", store / "s")
    assert result.exit_code == 0 and other.name in (store / "s" / "report.html").read_text(), result.output
    assert _cli("report", run).exit_code == 2
    ckpt = other / "checkpoints"
    shutil.copy(next(ckpt.glob("step-*.safetensors")), ckpt / "snapshot-3.safetensors")
    (ckpt / "snapshot-3.json").write_text(json.dumps({"step": 3, "epoch": 1, "fraction": "half"}))
    assert snapshot_steps(ckpt) == {}
    assert "snapshot-3.json: not a checkpoint marker" in capsys.readouterr().err


def test_names_that_are_not_utf8_are_shown_escaped(small_sweep, tmp_path):  # noqa: F811
    store, cfgs, _ = _copy(small_sweep, tmp_path)
    run = store / "s" / cfgs[0].run_id()
    (run / "figures").mkdir(exist_ok=True)
    shutil.copy(next((store / "s").rglob("*.png"), None) or _png(tmp_path), run / "figures" / os.fsdecode(b"\xff.png"))
    shutil.copytree(store / "s", store / os.fsdecode(b"s\xfe"))
    result = _cli("report", run)
    assert result.exit_code == 0 and "\\xff" in (run / "report.html").read_text(), result.output
    result = _cli("results", store, "--sql", "SELECT DISTINCT sweep FROM runs")
    assert result.exit_code == 0 and "\\xfe" in result.output and "skipped" in result.output, result.output


def _png(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    path = tmp_path / "x.png"
    plt.figure().savefig(path)
    plt.close("all")
    return path


LINKS = {"summary.md": ("s/summary.md", "file"), "figure": ("s/{run}/figures/x.png", "file"),
         "analysis": ("s/{run}/analysis/final", "dir"), "summary": ("s/{run}/summary.json", "summary"),
         "metrics": ("s/{run}/metrics.parquet", "file"), "run-dir": ("s/0123456789ab", "run")}


@pytest.mark.slow
@pytest.mark.parametrize("link", list(LINKS))
def test_no_reader_follows_a_link_out_of_the_store(small_sweep, tmp_path, link):  # noqa: F811
    store, cfgs, _ = _copy(small_sweep, tmp_path)
    run = store / "s" / cfgs[0].run_id()
    outside = tmp_path / "outside"
    outside.mkdir()
    secret = "SECRET-OUTSIDE"
    where, kind = LINKS[link]
    target = {"file": outside / "secret.png", "dir": outside, "summary": outside / "summary.json",
              "run": outside / "run"}[kind]
    if kind == "run":
        shutil.copytree(run, target)
        _edit(target / "summary.json", lambda s: s.update(profile=secret))
    elif kind == "summary":
        summary = json.loads((run / "summary.json").read_text())
        target.write_text(json.dumps({**summary, "profile": secret}))
    elif kind == "dir":
        (outside / "flow.json").write_text(json.dumps({"headline": secret}))
        shutil.copy(_png(tmp_path), outside / "flow.png")
    else:
        target.write_text(secret)
    path = store / where.format(run=run.name)
    if path.is_dir():
        shutil.rmtree(path)
    path.unlink(missing_ok=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to(target)
    for args in (["report", store / "s"], ["report", run], ["show", run], ["results", store / "s"],
                 ["results", store / "s", "--sql", "SELECT profile FROM runs"]):
        result = _cli(*args)
        assert secret not in result.output and "Traceback" not in result.output, (args, result.output)
        assert result.exit_code in (0, 2), (args, result.output)
        for report in (store / "s" / "report.html", run / "report.html"):
            assert not report.is_file() or secret not in report.read_text()
    assert "symbolic link out of" in _cli("report", store / "s").output


HOSTILE_STRINGS = ["cpu [reduced]", "[/bold]", "\x1b]0;title\x07\x1b[2J", "[bold red]x[/]", "$\\frac{$"]


@pytest.mark.parametrize("text", HOSTILE_STRINGS)
def test_stored_strings_are_printed_as_they_are(small_sweep, tmp_path, text):  # noqa: F811
    store, cfgs, _ = _copy(small_sweep, tmp_path)
    run = store / "s" / cfgs[0].run_id()
    _edit(run / "summary.json", lambda s: s.update(label=text, device=text, profile=text))
    write_results(store / "s")
    shown = _cli("show", run)
    assert shown.exit_code == 0, shown.output
    assert _cli("report", run).exit_code == 0  # its figure's title holds the profile too
    assert f'<section class="run" id="run-{cfgs[0].run_id()}">' in (run / "report.html").read_text()
    table = _cli("results", store / "s", "--sql", "SELECT label FROM runs")
    assert table.exit_code == 0, table.output
    for output in (shown.output, table.output):
        assert not CONTROL.search(output)
        if "\x1b" in text:
            assert "\\x1b]0;title\\x07\\x1b[2J" in output
        else:
            assert text in output


@pytest.mark.slow
def test_a_profile_label_with_markup_prints_after_train(tmp_path):
    import yaml

    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(tiny_run_dict(train={**tiny_run_dict()["train"], "epochs": 1})))
    result = _cli("train", path, "--out", tmp_path / "runs", "-q", "--set", "profile=cpu [reduced] [/x] \x1b[2J")
    assert result.exit_code == 0, result.output
    assert "cpu [reduced] [/x] \\x1b[2J" in result.output and not CONTROL.search(result.output)


def test_an_unfinished_run_and_a_sweep_show_a_stored_profile_as_it_is_and_its_events_log_obeys_nothing(tmp_path):
    """Brackets in a profile are text on every card (an unfinished run's, a sweep's listing), and what reaches
    ``events.log`` from a config (the profile, with an escape that clears a screen and a line feed) is one line of
    printable text per event."""
    from conftest import killed_after

    from reasonlab.config import resolve

    profile = "cpu [reduced] [/x] \x1b[2J\nforged"
    cfg = resolve(tiny_run_dict(profile=profile))
    with pytest.MonkeyPatch.context() as mp:
        partial = killed_after(cfg, tmp_path / "s", 1, mp)
    (tmp_path / "s" / "sweep.json").write_text(json.dumps({"name": "s", "axes": ["seed"]}))
    for target, shown in ((partial, "cpu [reduced] [/x] \\x1b[2J"), (tmp_path / "s", "profile cpu ")):
        result = _cli("show", target)
        assert result.exit_code == 0 and shown in result.output and not CONTROL.search(result.output), result.output
    events = (partial / "events.log").read_text()
    assert "profile cpu [reduced] [/x] \\x1b[2J\\x0aforged on " in events and not CONTROL.search(events)
    assert all(line[:4].isdigit() for line in events.splitlines()), events


def test_a_record_with_arrays_round_trips_and_a_damaged_npz_is_one_line(tmp_path):
    """Numbers in JSON, arrays (numpy or torch) in the npz beside it; a damaged npz is a StoreError naming it."""
    import numpy as np
    import torch

    from reasonlab.errors import StoreError
    from reasonlab.files import read_with_arrays, write_with_arrays

    record = {"early": {"epoch": np.int64(3), "ok": np.bool_(True), "cosine": np.eye(3),
                        "pca": (list(range(4)), torch.ones(4, 2), np.float32(0.5))}}
    write_with_arrays(tmp_path / "g.json", record)
    back = read_with_arrays(tmp_path / "g.json", "geometry", "rerun it")
    assert back["early"]["epoch"] == 3 and back["early"]["ok"] is True
    assert np.array_equal(back["early"]["cosine"], np.eye(3))
    assert back["early"]["pca"][0] == [0, 1, 2, 3] and back["early"]["pca"][1].shape == (4, 2)
    assert back["early"]["pca"][2] == 0.5
    (tmp_path / "g.npz").write_bytes(b"not a zip")
    with pytest.raises(StoreError, match=r"g\.npz: damaged geometry arrays; rerun it$"):
        read_with_arrays(tmp_path / "g.json", "geometry", "rerun it")


def test_an_sql_error_is_one_line_of_bounded_length():
    """DuckDB's binder can print a whole expression on its error's first line (2 kB, here its star's column list
    over a committed sweep): the message keeps its start."""
    from reasonlab.sweep import sql_query

    sweep = Path(__file__).resolve().parents[2] / "results" / "prontoqa-cpu"
    with pytest.raises(ConfigError) as caught:
        query(sweep, """SELECT "init.gamma" g, * LIKE 'final.%acc%' FROM runs""")
    message = str(caught.value)
    assert "\n" not in message and len(message) <= sql_query.SQL_ERROR_CHARS + 10, len(message)
    assert message.startswith("--sql: Binder Error") and message.endswith("…")
