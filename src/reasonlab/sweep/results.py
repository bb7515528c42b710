"""The results table of a sweep: a cache of its run directories, bound to their files, and its views as text.

``<sweep>/results.parquet`` holds one row per finished run: its config fields flattened to the dotted names
``--set`` uses (``init.gamma``, ``model.depth``, ``seed``, ...) and its summary figures (``label``,
``final.seen_test_acc``, ``outcome.4-3.inferential``, ...). The run directories are the source of truth and the
table is a cache of them: each row is bound to its run's files (``sweep.bindings``), and every reader checks the
bindings against the runs — a row edited by hand, a row whose run is gone, a run whose summary or metrics changed
since — so it serves only rows that still hold, reads the other runs from their own files, and leaves out a run
whose summary or metrics file does not read. Readers write nothing; a sweep rewrites the table under a lock and
replaces it atomically, so concurrent writers cannot lose a row and a reader never sees a half-written table.
SQL over these tables is ``sweep.sql_query``.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from reasonlab.config import ConfigError
from reasonlab.errors import StoreError
from reasonlab.files import atomic_write_bytes, warn
from reasonlab.records import check_metrics, load_run, read_sweep, run_dirs, within
from reasonlab.registry import task_kind, task_kinds
from reasonlab.store import LOCKS, file_lock, parquet_source
from reasonlab.sweep.bindings import holds, row_digest, run_binding, stored_bindings, with_bindings
from reasonlab.terminal import counted

RESULTS = "results.parquet"
_SUMMARY_FIELDS = ("run_id", "status", "label", "profile", "epochs", "steps", "wall_time_s", "n_params", "device",
                   "threads", "git_revision", "diverged_step")


def flatten(data: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested dicts to dotted keys; lists and empty dicts become JSON text so every cell is a scalar."""
    out: dict[str, Any] = {}
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            out.update(flatten(value, f"{name}."))
        elif isinstance(value, list | dict):
            out[name] = json.dumps(value)
        else:
            out[name] = value
    return out


def figure_columns(figures: dict[str, Any], prefix: str) -> dict[str, Any]:
    """Figures keyed by evaluation-set path (``heldout/4-3/train_keys/inferential``) as dotted columns."""
    return flatten({k.replace("/", "."): v for k, v in figures.items()}, prefix)


def point_columns(summary: dict[str, Any], field: str, scalars: tuple[str, ...], nested: str) -> dict[str, Any]:
    """The columns of a summary field of points read over a run's history (``escape``, ``plateau``): each point's
    scalars and its nested figures (``escape.at50.heldout.4-3.train_keys.inferential``); a point never reached
    has its scalar columns, empty."""
    row: dict[str, Any] = {}
    for key, point in (summary.get(field) or {}).items():
        point = point or {}
        row.update({f"{field}.{key}.{k}": point.get(k) for k in scalars})
        row.update(figure_columns(point.get(nested) or {}, f"{field}.{key}.{nested}."))
    return row


def run_row(summary: dict[str, Any]) -> dict[str, Any]:
    """A run's results row: its summary fields, machine, config, final and best figures, and the columns of its
    kind's own summary fields (``Kind.columns``)."""
    row = {k: summary.get(k) for k in _SUMMARY_FIELDS}
    row["version"] = summary.get("versions", {}).get("reasonlab")
    row.update(flatten(summary.get("machine") or {}, "machine."))  # machine.cpu, machine.kernels
    row.update(flatten(summary.get("config", {})))
    row.update(figure_columns(summary.get("final", {}), "final."))
    row.update(figure_columns(summary.get("best", {}), "best."))
    row.update(task_kind(summary["config"]["task"]["kind"]).columns(summary))
    return row


def _table(rows: list[dict[str, Any]]) -> pa.Table:
    """One column per field of any row; a field whose values differ in type between runs (a figure in one, text in
    another: summaries of different versions or kinds) is kept as text, and said so in one line. A table of no
    rows still has its ``run_id`` column, so the table written before any run finishes reads as a results table."""
    columns: dict[str, None] = {}
    for row in rows:
        columns.update(dict.fromkeys(row))
    arrays = {}
    for c in columns:
        values = [row.get(c) for row in rows]
        try:
            arrays[c] = pa.array(values)
        except (pa.ArrowException, TypeError, ValueError, OverflowError):
            warn(f"results column {c}: values of different types across runs; kept as text")
            arrays[c] = pa.array([None if v is None else json.dumps(v) if not isinstance(v, str) else v
                                  for v in values], pa.string())
    return pa.table(arrays) if arrays else pa.table({"run_id": pa.array([], pa.string())})


def write_results(sweep_dir: Path) -> Path:
    """Write ``results.parquet`` of the finished runs under ``sweep_dir`` (locked, atomic), each row bound to its
    run's files (``sweep.bindings``): the rows still bound are kept, the others built from their runs."""
    sweep_dir = Path(sweep_dir)
    path = sweep_dir / RESULTS
    with file_lock(sweep_dir / LOCKS / "results.lock"):
        table, bindings = _current(sweep_dir)
        sink = pa.BufferOutputStream()
        pq.write_table(with_bindings(table, bindings), sink)
        atomic_write_bytes(path, sink.getvalue().to_pybytes())
    return path


def results_table(sweep_dir: Path) -> pa.Table:
    """The sweep's results: one row per finished run whose summary and metrics read, checked against the run
    directories (``_current``); nothing is written."""
    sweep_dir = Path(sweep_dir)
    if not run_dirs(sweep_dir) and not (sweep_dir / RESULTS).exists():
        raise ConfigError(f"{sweep_dir}: no {RESULTS}; pass a sweep directory (run `reasonlab sweep` first)")
    return _current(sweep_dir)[0]


def _current(sweep_dir: Path) -> tuple[pa.Table, dict[str, dict[str, Any]]]:
    """(the results table of the runs under ``sweep_dir``, each row's binding). The stored table is a cache: a row
    is served as stored only while it and its run's files are as they were written (``bindings.holds``); every
    other run is read from its own files — its summary checked in full, its metrics file's columns from its footer
    — and a run that does not read is said in one line and left out; a row whose run is gone goes. Rows that did
    not hold because of the table itself (edited, a run's second row, a run gone) are counted in one line; a table
    with no bindings (written before them) is rebuilt silently."""
    table = _stored_rows(sweep_dir)
    stored, bindings = (table.to_pylist(), stored_bindings(table)) if table is not None else ([], {})
    kept, fresh, out = {}, {}, 0
    runs = {run_dir.name: run_dir for run_dir in run_dirs(sweep_dir)}
    for row in stored:
        rid = row.get("run_id")
        now = run_binding(runs[rid]) if rid in runs and rid not in kept else None
        if holds(bindings.get(rid), row, now):
            kept[rid] = (row, now)
        elif bindings and (rid not in runs or rid in kept or bindings.get(rid, {}).get("row") != row_digest(row)):
            out += 1  # a row of no run, a second row of one, or a row edited: a run whose files changed says so itself
    for rid, run_dir in runs.items():
        if rid not in kept and (built := _fresh_row(run_dir)) is not None:
            fresh[rid] = built
    if out:
        warn(f"{sweep_dir / RESULTS}: {counted(out, 'row')} out of date with the run directories (edited, or "
             "runs changed or removed since it was written); answered from the runs' own files")
    found = {**kept, **fresh}
    order = sorted(found)
    bound = {rid: dict(found[rid][1]) for rid in order}
    if table is not None and not fresh and len(kept) == len(stored):  # every row holds: the table as it is
        return table, bound
    return _table([found[rid][0] for rid in order]), bound


def _fresh_row(run_dir: Path) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """(results row, binding) of a run read from its own files, or None (said in one line) when its summary or its
    metrics file does not read: such a run is in no answer."""
    try:
        summary = load_run(run_dir)[0]
        check_metrics(run_dir)
        binding = run_binding(run_dir)
        if binding is None:
            raise StoreError(f"{run_dir}: its summary or metrics file cannot be read as the run's own; rerun it")
    except StoreError as e:
        warn(f"{e}; skipped")
        return None
    return run_row(summary), binding


def _stored_rows(sweep_dir: Path) -> pa.Table | None:
    """The stored table; None where there is none (a group of runs such as ``runs/adhoc``) or it is a link out of
    the sweep; a damaged table, or a FIFO or device in its place, is said in one line and read as none (the rows
    are read from the runs)."""
    path = sweep_dir / RESULTS
    if not path.exists() or not within(sweep_dir, [path]):
        return None
    try:
        return _stored_table(sweep_dir)
    except StoreError as e:
        warn(f"{e}; answered from the run directories")
        return None


def _stored_table(sweep_dir: Path) -> pa.Table:
    """The sweep's ``results.parquet`` as stored, or a one-line StoreError: not a regular file, damaged, or not a
    results table."""
    path = sweep_dir / RESULTS
    try:
        table = pq.read_table(parquet_source(path, "results table"))
        if table.schema.field("run_id").type == pa.string():  # KeyError: no such column
            return table
        why = "its run_id column is not text"
    except (pa.ArrowException, OSError, KeyError) as e:
        why = "no run_id column" if isinstance(e, KeyError) else "damaged"
    raise StoreError(f"{path}: {why}")


def read_results(sweep_dir: Path) -> list[dict[str, Any]]:
    return results_table(sweep_dir).to_pylist()


def _holds_runs(folder: Path) -> bool:
    """A sweep (its results table) or a group of finished runs without one (``runs/adhoc``)."""
    return (folder / RESULTS).exists() or bool(run_dirs(folder))


def sweep_dirs(target: Path) -> list[Path]:
    """``target`` itself if it is a sweep (or a group of runs), else those directly under it (a store root): not
    a link out of it, and named in UTF-8 (a sweep's name is a column of the tables; any other is reported in one
    line and skipped)."""
    target = Path(target)
    if not target.is_dir():
        raise ConfigError(f"{target}: no such directory; pass a sweep directory or a store root")
    if _holds_runs(target):
        return [target]
    found = sorted(p for p in within(target, target.iterdir()) if p.is_dir() and _named(p) and _holds_runs(p))
    if not found:
        raise ConfigError(f"{target}: no {RESULTS} here or one level below; pass a sweep directory")
    return found


def _named(folder: Path) -> bool:
    try:
        folder.name.encode()
    except UnicodeEncodeError:
        warn(f"{folder}: a folder name that is not UTF-8; skipped (rename it)")
        return False
    return True


def csv_text(columns: list[str], rows: list[tuple]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(columns)
    writer.writerows(rows)
    return buf.getvalue()


def format_cell(value: Any) -> str:
    """One table cell as ``reasonlab results`` prints it: floats to four significant digits, a missing value as —."""
    if value is None:
        return "—"
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def markdown_table(columns: list[str], rows: list[tuple]) -> str:
    """The table as GitHub Markdown, cells as printed: what a doc's run table is made of (``results --markdown``,
    ``scripts/regenerate_docs.py``), so its figures come from the store rather than being copied by hand."""
    def line(cells: Iterable[Any]) -> str:
        return "| " + " | ".join(format_cell(v).replace("|", "\\|").replace("\n", " ") for v in cells) + " |"

    return "\n".join([line(columns), "|" + "---|" * len(columns), *(line(row) for row in rows)]) + "\n"


def sweep_axes(sweep_dir: Path, rows: list[dict[str, Any]]) -> list[str]:
    """The sweep's declared axes (a linked axis ``a+b`` as its fields), else the config columns whose value
    differs between runs."""
    record = read_sweep(sweep_dir)
    if record is not None:
        return [f for a in record["axes"] for f in a.split("+")]
    cols = [c for c in (rows[0] if rows else {}) if c.split(".")[0] in {"seed", "task", "model", "init", "train"}]
    return [c for c in cols if len({json.dumps(r.get(c)) for r in rows}) > 1]


def main_columns(rows: list[dict[str, Any]]) -> list[str]:
    """The figures ``reasonlab results`` shows beside the axes: each kind's ``main_columns`` (names or
    ``fnmatch`` patterns such as ``outcome.*.inferential``), else its final figures; in the order of the rows'
    columns."""
    kinds = task_kinds()
    wanted: set[str] = set()
    for kind in {r.get("task.kind") for r in rows}:
        wanted |= set(kinds[kind].main_columns if kind in kinds else ("final.*",))
    return [c for c in dict.fromkeys(c for r in rows for c in r) if any(fnmatchcase(c, w) for w in wanted)]


def table_view(target: Path, show_all: bool = False) -> tuple[list[str], list[tuple]]:
    """The results of one sweep or several: every column, or the axes, outcome and main figures."""
    sweeps = sweep_dirs(target)
    found = {s: read_results(s) for s in sweeps}
    rows = [{"sweep": s.name, **r} for s in sweeps for r in found[s]]
    if show_all:
        columns = list(dict.fromkeys(c for r in rows for c in r))
    else:
        axes = list(dict.fromkeys(a for s in sweeps for a in sweep_axes(s, found[s])))
        figures = main_columns(rows)
        columns = [*(["sweep"] if len(sweeps) > 1 else []), "run_id", *axes, "label", *figures, "wall_time_s"]
    key = [c for c in columns if c not in ("sweep", "run_id")]
    rows.sort(key=lambda r: tuple(_sort_key(r.get(c)) for c in ["sweep", *key]))
    return columns, [tuple(r.get(c) for c in columns) for r in rows]


def _sort_key(value: Any) -> tuple[int, Any]:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return (0, value)
