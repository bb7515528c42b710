"""SQL over all runs: one read-only DuckDB statement over a sweep or a whole store, within its bounds.

DuckDB sees three views: ``runs`` (the results tables of ``sweep.results``, with a ``sweep`` column; a group of
runs without a table, such as ``runs/adhoc`` of ``reasonlab train``, is read from its runs' summaries), ``metrics``
(every finished run's metrics.parquet with ``sweep`` and ``run_id``, over a whole store when given its root) and
``offsets`` (the held-out offset histograms: sweep, run_id, set, offset, count), the last two loaded by
``sweep.sql_tables``. A run is in all three or in none: one whose summary or metrics were skipped is in no answer.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from reasonlab.arguments import escaped
from reasonlab.config import ConfigError
from reasonlab.records import finished_summaries, run_dirs, within
from reasonlab.sweep.results import results_table, sweep_dirs
from reasonlab.sweep.sql_names import name_hint
from reasonlab.sweep.sql_tables import load_metrics, offsets_table

SQL_ERROR_CHARS = 300  # of DuckDB's first error line: its binder errors can print a 2 kB expression
# Bounds of one `results --sql` statement (each raised by its flag): wall time, DuckDB's memory, rows returned.
SQL_SECONDS = 60.0
SQL_MEMORY_GIB = 4.0
SQL_ROWS = 100_000
# Past its time bound, a statement DuckDB has not stopped within this many seconds (it looks for an interrupt
# between chunks of rows, not while it builds one value such as a list of 10^8 numbers) is given up on.
SQL_GRACE_S = 2.0


def connect(target: Path, memory_gib: float = SQL_MEMORY_GIB):  # -> duckdb.DuckDBPyConnection
    """An in-memory DuckDB connection holding the ``runs``, ``metrics`` and ``offsets`` tables of ``target`` and
    nothing else: once they are loaded, file and network access is off, extensions cannot be installed or
    loaded, DuckDB may hold at most ``memory_gib`` GiB (and spills nothing to disk), and the configuration is
    locked, so a query sees the store's tables only and cannot exhaust the machine."""
    import duckdb

    sweeps = sweep_dirs(target)
    con = duckdb.connect(config={"autoinstall_known_extensions": False, "autoload_known_extensions": False})
    found = {s: finished_summaries(s) for s in sweeps}
    tables = {s: results_table(s) for s in sweeps}
    listed = {s: set(tables[s].column("run_id").to_pylist()) if tables[s].num_rows else set() for s in sweeps}
    metric_files = [m for s in sweeps for r, _ in found[s] if r.name in listed[s]
                    for m in within(r, [r / "metrics.parquet"])]
    loaded = load_metrics(con, metric_files)
    # a run is in every table or in none: one whose summary or metrics were skipped is in no answer
    kept = {s: {m.parent.name for m in loaded if m.parent.parent == s} for s in sweeps}
    tables = [_with_sweep(_without(tables[s], {r.name for r in run_dirs(s)} - kept[s]), s.name) for s in sweeps]
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


def _without(table: pa.Table, run_ids: set[str]) -> pa.Table:
    """The table without the rows of ``run_ids``."""
    if not run_ids:
        return table
    return table.filter(pc.invert(pc.is_in(table["run_id"], value_set=pa.array(sorted(run_ids), pa.string()))))


def _with_sweep(table: pa.Table, name: str) -> pa.Table:
    return table.add_column(0, "sweep", pa.array([name] * table.num_rows, pa.string()))


def _check_text(sql: str) -> None:
    """The statement is Unicode text: a byte of the command line that is not UTF-8 reaches it as a lone surrogate
    (``\\udcff``), which DuckDB cannot take; refused in one line before any table is loaded."""
    bad = next((i for i, c in enumerate(sql) if "\ud800" <= c <= "\udfff"), None)
    if bad is not None:
        raise ConfigError(f"--sql: character {bad + 1} is {escaped(sql[bad])}, a byte that is not UTF-8 text (as "
                          "the shell passed it); give the statement in UTF-8")


def query(target: Path, sql: str, seconds: float = SQL_SECONDS, memory_gib: float = SQL_MEMORY_GIB,
          max_rows: int = SQL_ROWS, overrun: Callable[[str], object] | None = None) -> tuple[list[str], list[tuple]]:
    """Run one read-only DuckDB statement (a SELECT, or a WITH ... SELECT) over the store's tables, interrupted
    after ``seconds``, in at most ``memory_gib`` GiB, returning at most ``max_rows`` rows; anything else, a bad
    query or a bound reached, is a one-line error. A statement still running ``SQL_GRACE_S`` after its interrupt
    gets ``overrun`` called, from another thread, with that error's message: the command line ends there."""
    import threading

    import duckdb

    _check_text(sql)
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
