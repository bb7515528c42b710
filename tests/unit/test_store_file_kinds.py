"""A store file is read only when it is a regular file of its own run, and what is read from it is shown safely.

A FIFO in place of a run's file would block its reader's open for ever (no signal ends that wait): every reader
opens only a regular file, and a FIFO is one line naming it, its run skipped or refused as a damaged run is. A
metrics file names its run, so another run's copied in is refused the same way. Control characters of run data
never reach the HTML report.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from test_reliability import _cli, _copy, small_sweep  # noqa: F401 - small_sweep is a fixture

import reasonlab
from reasonlab.errors import StoreError
from reasonlab.store import RUN_ID_KEY, read_metrics


@contextmanager
def writer_for(fifos: list[Path]) -> Iterator[list[Path]]:
    """A test that fails rather than hangs: a reader that opens one of ``fifos`` waits for a writer, and this
    thread is one (it opens the FIFO and closes it at once, so the reader reads an empty file). The FIFOs it had
    to open are listed: none, when no reader opened one."""
    opened: list[Path] = []
    stop = threading.Event()

    def write() -> None:
        while not stop.wait(0.2):
            for fifo in fifos:
                try:
                    os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))  # ENXIO while no reader waits
                    opened.append(fifo)
                except OSError:
                    pass

    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    try:
        yield opened
    finally:
        stop.set()
        thread.join()


def _fifo(path: Path) -> Path:
    path.unlink()
    os.mkfifo(path)
    return path


def _said(output: str, *words: str) -> list[str]:
    return [line for line in output.splitlines() if all(w in line for w in words)]


def _in_rows(output: str, run: Path) -> bool:
    """Whether the run is in a table printed in ``output``: a line naming it that is no message about its files."""
    return any(run.name in line and str(run) not in line for line in output.splitlines())


def test_a_fifo_in_place_of_a_store_file_is_one_line_and_never_opened(small_sweep, tmp_path):  # noqa: F811
    """A FIFO ``metrics.parquet`` leaves its run out of ``results``, ``--sql`` and the sweep's report, in one line
    each naming it, and ``report`` of the run refuses it (exit 2) rather than leaving its curves out silently. A
    FIFO ``summary.json`` is refused by ``show`` (not shown as an unfinished run's card) and skips its run; a FIFO
    ``results.parquet`` is answered from the runs; an unfinished run's FIFO ``config.yaml`` is refused by
    ``show``. No reader opens any of them."""
    store, cfgs, _ = _copy(small_sweep, tmp_path)
    sweep = store / "s"
    run, other = (sweep / c.run_id() for c in cfgs)
    partial = sweep / "0123456789ab.partial"
    shutil.copytree(run, partial)
    (partial / "summary.json").unlink()
    fifos = [_fifo(run / "metrics.parquet"), _fifo(other / "summary.json"), _fifo(sweep / "results.parquet"),
             _fifo(partial / "config.yaml")]
    with writer_for(fifos) as opened:
        table = _cli("results", sweep)
        sql = _cli("results", sweep, "--sql", "SELECT DISTINCT run_id FROM metrics")
        report = _cli("report", sweep)
        alone = _cli("report", run)
        shown = _cli("show", other)
        unfinished = _cli("show", partial)
    assert opened == []
    for result in (table, sql, report):
        assert result.exit_code == 0, result.output
        assert len(_said(result.output, f"{run / 'metrics.parquet'}: not a regular file")) >= 1, result.output
        assert len(_said(result.output, f"{other / 'summary.json'}: not a regular file", "skipped")) == 1
        assert not _in_rows(result.output, run), result.output
    assert len(_said(table.output, f"{sweep / 'results.parquet'}: not a regular file", "answered from")) == 1
    assert f'id="run-{run.name}"' not in (sweep / "report.html").read_text()
    for result, path in ((alone, run / "metrics.parquet"), (shown, other / "summary.json"),
                         (unfinished, partial / "config.yaml")):
        assert result.exit_code == 2 and result.output.strip().splitlines() == [
            f"error: {path}: not a regular file; not read as a {_what(path)} (remove it)"], result.output


def _what(path: Path) -> str:
    return {"metrics.parquet": "metrics file", "summary.json": "run summary", "config.yaml": "run config"}[path.name]


def test_another_run_s_metrics_copied_in_are_not_served(small_sweep, tmp_path):  # noqa: F811
    """A metrics file records its run's id in its Parquet metadata: another run's copied over it is one line naming
    both runs, and the run is in no answer (``results``, ``--sql``) and refused by ``report`` of it and by
    ``Run.metrics``. A file that records no run (written before the id was: the committed runs) is read as the
    rows of the run its folder names."""
    store, cfgs, _ = _copy(small_sweep, tmp_path)
    sweep = store / "s"
    run, other = (sweep / c.run_id() for c in cfgs)
    own = run / "metrics.parquet"
    legacy = pq.read_table(own).replace_schema_metadata(None)
    shutil.copy(other / "metrics.parquet", own)
    why = f"{own}: the metrics of run {other.name}, not of run {run.name} (copied from another run?); rerun the run"
    table = _cli("results", sweep)
    sql = _cli("results", sweep, "--sql", "SELECT DISTINCT run_id FROM metrics")
    for result in (table, sql):
        assert result.exit_code == 0 and _said(result.output, why, "skipped"), result.output
        assert not _in_rows(result.output, run), result.output
    alone = _cli("report", run)
    assert alone.exit_code == 2 and alone.output.strip().splitlines() == [f"error: {why}"], alone.output
    with pytest.raises(StoreError, match="the metrics of run"):
        reasonlab.load(run).metrics  # noqa: B018 - the property reads the file
    pq.write_table(legacy, own)
    assert len(read_metrics(own)) == legacy.num_rows and _in_rows(_cli("results", sweep).output, run)
    committed = next((Path(__file__).parents[2] / "results").rglob("metrics.parquet"))
    assert RUN_ID_KEY not in (pq.read_schema(committed).metadata or {}) and read_metrics(committed)


def test_control_characters_of_run_data_never_reach_the_html_report(small_sweep, tmp_path):  # noqa: F811
    """ESC sequences, a C1 control and a BEL in a stored label, profile and device and in the sweep's
    ``summary.md`` are dropped from ``report.html`` (of the run and of the sweep), their printable rest kept, the
    markup escaped; tabs and line feeds stay."""
    store, cfgs, _ = _copy(small_sweep, tmp_path)
    sweep = store / "s"
    run = sweep / cfgs[0].run_id()
    hostile = "\x1b]0;pwned\x07\x1b[2J<b>\x9b31m"
    summary = json.loads((run / "summary.json").read_text())
    summary.update(label=hostile, profile=hostile, device=hostile)
    (run / "summary.json").write_text(json.dumps(summary))
    (sweep / "summary.md").write_text(f"# sweep\n\nnote {hostile}\n")
    for target in (run, sweep):
        result = _cli("report", target)
        assert result.exit_code == 0, result.output
        page = (target / "report.html").read_text()
        assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f]", page)
        assert "]0;pwned[2J&lt;b&gt;31m" in page


def test_the_studies_readers_of_committed_runs_refuse_a_fifo_config(small_sweep, tmp_path):  # noqa: F811
    """The docs' regeneration reads committed runs' ``config.yaml`` (``Repository.yaml``, the modular side by
    side's reader; the others through ``records.read_config``): a FIFO in its place is one StoreError naming it,
    never opened."""
    from reasonlab.studies.modular.side_by_side import reasonlab_history
    from reasonlab.studies.sections import Repository

    store, cfgs, _ = _copy(small_sweep, tmp_path)
    run = store / "s" / cfgs[0].run_id()
    fifo = _fifo(run / "config.yaml")
    readers = [lambda: Repository(store).yaml(fifo.relative_to(store)), lambda: reasonlab_history(run)]
    with writer_for([fifo]) as opened:
        for read in readers:
            with pytest.raises(StoreError, match=f"{re.escape(str(fifo))}: not a regular file"):
                read()
    assert opened == []
