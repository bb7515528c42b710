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
from reasonlab.store import check_metrics_columns, read_metrics


def _sql_list(paths: list[Path]) -> str:
    return "[" + ", ".join("'" + str(p).replace("'", "''") + "'" for p in paths) + "]"


def load_metrics(con, files: list[Path]) -> list[Path]:  # con: duckdb.DuckDBPyConnection
    """The ``metrics`` table from every run's metrics file, its columns read by name; a damaged file, or one that
    is not a metrics table, is reported in one line and skipped. Returns the files loaded."""
    import duckdb

    try:
        con.execute(
            "CREATE TABLE metrics AS SELECT "
            "regexp_extract(filename, '([^/]+)/[^/]+/metrics[.]parquet$', 1) AS sweep, "
            "regexp_extract(filename, '([^/]+)/metrics[.]parquet$', 1) AS run_id, "
            "epoch::INTEGER AS epoch, step::BIGINT AS step, split::VARCHAR AS split, metric::VARCHAR AS metric, "
            f"value::DOUBLE AS value FROM read_parquet({_sql_list(files)}, filename=true, union_by_name=true)")
        return files
    except duckdb.Error:
        readable = []
        for path in files:  # leave out the files that do not read as metrics
            try:
                read_metrics(path)
                readable.append(path)
            except StoreError as e:
                warn(f"{e}; skipped")
        if len(readable) == len(files):
            raise
        return load_metrics(con, readable) if readable else []


def metrics_readable(path: Path) -> bool:
    """Whether a metrics file's columns are the metrics schema's (read from its footer); if not, said in one line."""
    try:
        check_metrics_columns(path)
    except StoreError as e:
        warn(f"{e}; skipped")
        return False
    return True


def no_metrics(con) -> None:  # con: duckdb.DuckDBPyConnection
    """An empty ``metrics`` table of the right columns, where no run's metrics read."""
    con.execute("CREATE VIEW metrics AS SELECT NULL::VARCHAR AS sweep, NULL::VARCHAR AS run_id, NULL::INTEGER "
                "AS epoch, NULL::BIGINT AS step, NULL::VARCHAR AS split, NULL::VARCHAR AS metric, "
                "NULL::DOUBLE AS value WHERE false")


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
