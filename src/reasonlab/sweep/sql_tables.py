"""The tables SQL sees beside the results table (``sweep.sql_query.connect``): every run's metric rows and the
held-out offset histograms, loaded into a DuckDB connection. A metrics file that does not read, or is not a
metrics table, is reported in one line and skipped.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa

from reasonlab.errors import StoreError
from reasonlab.files import warn
from reasonlab.store import METRIC_SCHEMA, metrics_table


def load_metrics(con, files: list[Path]) -> list[Path]:  # con: duckdb.DuckDBPyConnection
    """The ``metrics`` table (sweep, run_id and the metrics columns) from every run's metrics file, each read and
    checked by ``store.metrics_table`` (a regular file only: a FIFO is never opened for reading); one that does not
    read is reported in one line and skipped. Returns the files loaded. The rows are copied into DuckDB, so the
    table is read now, while files may still be read."""
    tables, loaded = [], []
    for path in files:
        try:
            table = metrics_table(path)
        except StoreError as e:
            warn(f"{e}; skipped")
            continue
        names = {"sweep": path.parent.parent.name, "run_id": path.parent.name}
        for i, (column, name) in enumerate(names.items()):
            table = table.add_column(i, column, pa.array([name] * table.num_rows, pa.string()))
        tables.append(table)
        loaded.append(path)
    empty = pa.schema([("sweep", pa.string()), ("run_id", pa.string()), *METRIC_SCHEMA]).empty_table()
    con.register("metrics_arrow", pa.concat_tables(tables) if tables else empty)
    con.execute("CREATE TABLE metrics AS SELECT * FROM metrics_arrow")
    con.unregister("metrics_arrow")
    return loaded


def offsets_table(summaries: dict[Path, list[dict[str, Any]]]) -> pa.Table:
    """The held-out offset histograms of the runs' ``summaries``, by sweep."""
    from reasonlab.evaluate.set_score import histogram_bins  # here: the evaluation layer imports torch

    bins = histogram_bins()
    rows = {"sweep": [], "run_id": [], "set": [], "offset": [], "count": []}
    for s, runs in summaries.items():
        for summary in runs:
            for name, counts in summary.get("histograms", {}).items():
                for b, c in zip(bins, counts, strict=True):
                    for key, value in (("sweep", s.name), ("run_id", summary["run_id"]), ("set", name),
                                       ("offset", b), ("count", c)):
                        rows[key].append(value)
    return pa.table(rows, schema=pa.schema([("sweep", pa.string()), ("run_id", pa.string()), ("set", pa.string()),
                                            ("offset", pa.string()), ("count", pa.int64())]))
