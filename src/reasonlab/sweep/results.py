"""The results table of a sweep and SQL over all runs.

``<sweep>/results.parquet`` holds one row per finished run: its config fields flattened to the dotted names
``--set`` uses (``init.gamma``, ``model.depth``, ``seed``, ...) and its summary figures (``label``,
``final.seen_test_acc``, ``outcome.4-3.inferential``, ...). The table is rebuilt from the runs' own
``summary.json`` files under a lock and replaced atomically, so concurrent writers cannot lose a row and a reader
never sees a half-written table; the run directories stay the source of truth.

SQL (DuckDB) sees three views: ``runs`` (the results tables, with a ``sweep`` column; a group of runs without a
table, such as ``runs/adhoc`` of ``reasonlab train``, is read from its runs' summaries), ``metrics`` (every finished
run's metrics.parquet with ``sweep`` and ``run_id``, over a whole store when given its root) and ``offsets``
(the held-out offset histograms: sweep, run_id, set, offset, count), the last two loaded by ``sweep.sql_tables``. A
run is in all three or in none: one whose summary or metrics were skipped is in no answer.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterable
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from reasonlab.config import ConfigError
from reasonlab.records import finished_runs, finished_summaries, read_sweep, within
from reasonlab.registry import task_kind, task_kinds
from reasonlab.store import (
    LOCKS,
    RUN_ID,
    atomic_write_bytes,
    file_lock,
    warn,
)
from reasonlab.sweep.sql_names import name_hint
from reasonlab.sweep.sql_tables import load_metrics, metrics_readable, no_metrics, offsets_table

SQL_ERROR_CHARS = 300  # of DuckDB's first error line: its binder errors can print a 2 kB expression

RESULTS = "results.parquet"
# Bounds of one `results --sql` statement (each raised by its flag): wall time, DuckDB's memory, rows returned.
SQL_SECONDS = 60.0
SQL_MEMORY_GIB = 4.0
SQL_ROWS = 100_000
# Past its time bound, a statement DuckDB has not stopped within this many seconds (it looks for an interrupt
# between chunks of rows, not while it builds one value such as a list of 10^8 numbers) is given up on.
SQL_GRACE_S = 2.0
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
    another: summaries of different versions or kinds) is kept as text, and said so in one line."""
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
    return pa.table(arrays) if arrays else pa.table({})


def _summaries(sweep_dir: Path) -> list[dict[str, Any]]:
    return [summary for _, summary in finished_summaries(sweep_dir)]


def write_results(sweep_dir: Path) -> Path:
    """Rebuild ``results.parquet`` from the finished runs under ``sweep_dir`` (locked, atomic)."""
    sweep_dir = Path(sweep_dir)
    path = sweep_dir / RESULTS
    with file_lock(sweep_dir / LOCKS / "results.lock"):
        rows = [run_row(s) for s in _summaries(sweep_dir)]
        sink = pa.BufferOutputStream()
        pq.write_table(_table(rows), sink)
        atomic_write_bytes(path, sink.getvalue().to_pybytes())
    return path


def results_table(sweep_dir: Path) -> pa.Table:
    """The sweep's results table without the rows of runs that were skipped (``_rows_of``)."""
    sweep_dir = Path(sweep_dir)
    run_ids = {p.name for p in finished_runs(sweep_dir)}
    if not run_ids and not (sweep_dir / RESULTS).is_file():
        raise ConfigError(f"{sweep_dir}: no {RESULTS}; pass a sweep directory (run `reasonlab sweep` first)")
    return _rows_of(sweep_dir, run_ids)


def _rows_of(sweep_dir: Path, run_ids: set[str]) -> pa.Table:
    """The results table of the sweep with ``run_ids`` the runs that read: a run of the folder that is not among
    them (a damaged summary or metrics file, reported in one line and skipped; a copy under another id; a link
    out of the folder) has no row, never its earlier one from the stored table. The table is read from the runs'
    summaries where there is none (the runs of `reasonlab train`, ``runs/adhoc``) or it is a link out of the
    sweep."""
    path = sweep_dir / RESULTS
    if not path.is_file() or not within(sweep_dir, [path]):
        return _table([run_row(s) for s in _summaries(sweep_dir) if s["run_id"] in run_ids])
    table = _stored_table(sweep_dir)
    skipped = {p.name for p in sweep_dir.iterdir() if RUN_ID.fullmatch(p.name)} - run_ids
    if not skipped or "run_id" not in table.column_names:  # the latter: a table rebuilt from no run at all
        return table
    return table.filter(pc.invert(pc.is_in(table["run_id"], value_set=pa.array(sorted(skipped), pa.string()))))


def _stored_table(sweep_dir: Path) -> pa.Table:
    """The sweep's ``results.parquet``; a damaged one is reported in one line on stderr and rebuilt from the run
    directories (the source of truth), touching nothing else."""
    path = sweep_dir / RESULTS
    try:
        table = pq.read_table(path)
        if table.schema.field("run_id").type == pa.string():  # KeyError: no such column
            return table
        why = "its run_id column is not text"
    except (pa.ArrowException, OSError, KeyError) as e:
        why = "no run_id column" if isinstance(e, KeyError) else "damaged"
    warn(f"{path}: {why}; rebuilt from the run directories")
    return pq.read_table(write_results(sweep_dir))


def read_results(sweep_dir: Path) -> list[dict[str, Any]]:
    return results_table(sweep_dir).to_pylist()


def _holds_runs(folder: Path) -> bool:
    """A sweep (its results table) or a group of finished runs without one (``runs/adhoc``)."""
    return (folder / RESULTS).is_file() or bool(finished_runs(folder))


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


def connect(target: Path, memory_gib: float = SQL_MEMORY_GIB):  # -> duckdb.DuckDBPyConnection
    """An in-memory DuckDB connection holding the ``runs``, ``metrics`` and ``offsets`` tables of ``target`` and
    nothing else: once they are loaded, file and network access is off, extensions cannot be installed or
    loaded, DuckDB may hold at most ``memory_gib`` GiB (and spills nothing to disk), and the configuration is
    locked, so a query sees the store's tables only and cannot exhaust the machine."""
    import duckdb

    sweeps = sweep_dirs(target)
    con = duckdb.connect(config={"autoinstall_known_extensions": False, "autoload_known_extensions": False})
    found = {s: finished_summaries(s) for s in sweeps}
    metric_files = [m for s in sweeps for r, _ in found[s] for m in within(r, [r / "metrics.parquet"])
                    if metrics_readable(m)]
    # a table, not a view: read now, while files may still be read
    loaded = load_metrics(con, metric_files) if metric_files else []
    if not loaded:
        no_metrics(con)
    # a run is in every table or in none: one whose summary or metrics were skipped is in no answer
    kept = {s: {m.parent.name for m in loaded if m.parent.parent == s} for s in sweeps}
    tables = [_with_sweep(_rows_of(s, kept[s]), s.name) for s in sweeps]
    con.register("runs_arrow", pa.concat_tables(tables, promote_options="permissive"))
    con.execute("CREATE VIEW runs AS SELECT * FROM runs_arrow")
    con.register("offsets_arrow", offsets_table({s: [summary for r, summary in found[s] if r.name in kept[s]]
                                            for s in sweeps}))
    con.execute("CREATE VIEW offsets AS SELECT * FROM offsets_arrow")
    con.execute(f"SET memory_limit = '{int(memory_gib * 2**20)}KiB'")
    con.execute("SET temp_directory = ''")  # no spilling: it would write a .tmp folder in the working directory
    con.execute("SET enable_progress_bar = false")  # drawn on standard output, it would land amid the rows
    con.execute("SET enable_external_access = false")
    con.execute("SET lock_configuration = true")
    return con


def _with_sweep(table: pa.Table, name: str) -> pa.Table:
    return table.add_column(0, "sweep", pa.array([name] * table.num_rows, pa.string()))


def query(target: Path, sql: str, seconds: float = SQL_SECONDS, memory_gib: float = SQL_MEMORY_GIB,
          max_rows: int = SQL_ROWS, overrun: Callable[[str], object] | None = None) -> tuple[list[str], list[tuple]]:
    """Run one read-only DuckDB statement (a SELECT, or a WITH ... SELECT) over the store's tables, interrupted
    after ``seconds``, in at most ``memory_gib`` GiB, returning at most ``max_rows`` rows; anything else, a bad
    query or a bound reached, is a one-line error. A statement still running ``SQL_GRACE_S`` after its interrupt
    gets ``overrun`` called, from another thread, with that error's message: the command line ends there."""
    import threading

    import duckdb

    con = connect(target, memory_gib)
    stopped = f"--sql: stopped after {seconds:g} s; narrow the query, or pass --timeout with more seconds"
    timers = [threading.Timer(seconds, con.interrupt)]
    if overrun is not None:
        timers.append(threading.Timer(seconds + SQL_GRACE_S, overrun, args=(stopped,)))
    try:
        statements = con.extract_statements(sql)
        if len(statements) != 1 or statements[0].type != duckdb.StatementType.SELECT:
            kinds = ", ".join(s.type.name for s in statements) or "nothing"
            raise ConfigError(f"--sql: one SELECT over runs, metrics and offsets is allowed; got {kinds}")
        for timer in timers:
            timer.daemon = True
            timer.start()
        cur = con.execute(sql)
        rows: list[tuple] = []
        while len(rows) <= max_rows and (chunk := cur.fetchmany(min(10_000, max_rows + 1 - len(rows)))):
            rows += chunk
        if len(rows) > max_rows:
            raise ConfigError(f"--sql: more than {max_rows:,} rows; aggregate or add a LIMIT, or pass --max-rows")
        return [d[0] for d in cur.description or []], rows
    except duckdb.InterruptException:
        raise ConfigError(stopped) from None
    except duckdb.OutOfMemoryException:
        raise ConfigError(f"--sql: needs more than {memory_gib:g} GiB; narrow the query, or pass --memory-limit "
                          "with more GiB") from None
    except duckdb.Error as e:
        first = str(e).strip().splitlines()[0].rstrip("!") if str(e).strip() else type(e).__name__
        shown = first if len(first) <= SQL_ERROR_CHARS else f"{first[:SQL_ERROR_CHARS]}…"  # DuckDB may dump a plan
        raise ConfigError(f"--sql: {shown}{name_hint(con, sql, first)}") from None
    finally:
        for timer in timers:
            timer.cancel()
        con.close()


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
    rows = [{"sweep": s.name, **r} for s in sweeps for r in read_results(s)]
    if show_all:
        columns = list(dict.fromkeys(c for r in rows for c in r))
    else:
        axes = list(dict.fromkeys(a for s in sweeps for a in sweep_axes(s, read_results(s))))
        figures = main_columns(rows)
        columns = [*(["sweep"] if len(sweeps) > 1 else []), "run_id", *axes, "label", *figures, "wall_time_s"]
    key = [c for c in columns if c not in ("sweep", "run_id")]
    rows.sort(key=lambda r: tuple(_sort_key(r.get(c)) for c in ["sweep", *key]))
    return columns, [tuple(r.get(c) for c in columns) for r in rows]


def _sort_key(value: Any) -> tuple[int, Any]:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return (0, value)
    return (1, "" if value is None else str(value))
