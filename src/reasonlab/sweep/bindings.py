"""What binds each row of a results table to its run, so that the table is a cache checked against the runs.

``results.parquet`` is a copy of what the runs' own files say. Each of its rows is written with a binding, kept in
the table's Parquet metadata: the SHA-256 of the run's ``summary.json`` (the file the row was built from, after it
was checked in full), the size and the SHA-256 of the last 4 kB of its ``metrics.parquet`` (the Parquet footer:
columns and row groups; a file cut short or rewritten changes it), and the SHA-256 of the row as stored. A reader
compares them with the run directory (``run_binding``: one small read per file, no parsing or validation) and with
the row: a row whose run is gone, whose run's files changed, or which was itself edited, is not served — its run
is read again from its own files, or left out. The binding is by content, not by times, so a table still holds
after a copy or a ``git clone`` of its sweep.

Layer: sweep (below ``sweep.results``, which writes and reads the tables).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pyarrow as pa

from reasonlab.errors import StoreError
from reasonlab.files import inside, open_regular, read_bounded

KEY = b"reasonlab.bindings"
TAIL_BYTES = 4096  # of a metrics file: its Parquet footer (the schema and row groups) and the end of its data


def row_digest(row: dict[str, Any]) -> str:
    """The SHA-256 of a row as stored: its cells that hold a value (a column another run added is empty here, and
    does not change it), in name order."""
    cells = {k: v for k, v in row.items() if v is not None}
    return hashlib.sha256(json.dumps(cells, sort_keys=True, default=str).encode()).hexdigest()


def run_binding(run_dir: Path) -> dict[str, Any] | None:
    """The binding of a run directory's files as they are now (``summary`` and ``metrics``), or None when either
    cannot be read as a file of the run (missing, a link out of it, not a regular file, over its size bound): its
    row is then built afresh, which names what is wrong."""
    summary, metrics = run_dir / "summary.json", run_dir / "metrics.parquet"
    if not (inside(summary, run_dir) and inside(metrics, run_dir)):
        return None
    try:
        digest = hashlib.sha256(read_bounded(summary, "run summary")).hexdigest()
        with open_regular(metrics, "metrics file") as f:
            size = os.fstat(f.fileno()).st_size
            tail = os.pread(f.fileno(), TAIL_BYTES, max(0, size - TAIL_BYTES))
    except (StoreError, OSError):
        return None
    return {"summary": digest, "metrics": [size, hashlib.sha256(tail).hexdigest()]}


def with_bindings(table: pa.Table, bindings: dict[str, dict[str, Any]]) -> pa.Table:
    """``table`` carrying each run's binding (by run id), and each row's digest beside it."""
    rows = table.to_pylist()
    for row in rows:
        bindings[row["run_id"]]["row"] = row_digest(row)
    return table.replace_schema_metadata({**(table.schema.metadata or {}), KEY: json.dumps(bindings).encode()})


def stored_bindings(table: pa.Table) -> dict[str, dict[str, Any]]:
    """The bindings a stored table carries (none for a table written before they were, or not by reasonlab)."""
    try:
        found = json.loads((table.schema.metadata or {}).get(KEY, b"{}"))
    except ValueError:
        return {}
    return found if isinstance(found, dict) and all(isinstance(v, dict) for v in found.values()) else {}


def holds(binding: dict[str, Any] | None, row: dict[str, Any], now: dict[str, Any] | None) -> bool:
    """Whether a stored ``row`` with its stored ``binding`` is still what its run's files (bound ``now``) say."""
    return (binding is not None and now is not None and binding.get("row") == row_digest(row)
            and binding.get("summary") == now["summary"] and binding.get("metrics") == now["metrics"])
