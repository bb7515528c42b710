"""DuckDB's errors about a column's name, said in the store's terms: what to write instead.

The tables' columns are the dotted names of ``--set`` (``init.gamma``, ``final.seen_test_acc``), which SQL reads
otherwise: unquoted, ``init.gamma`` is column ``gamma`` of a table ``init`` (DuckDB: ``Referenced table "init" not
found``), and ``gamma`` alone is no column at all. ``name_hint`` turns either into the name to write.

Layer: sweep.
"""

from __future__ import annotations

import difflib
import re

from reasonlab.config import word_matches


def name_hint(con, sql: str, error: str) -> str:  # con: duckdb.DuckDBPyConnection
    """What to write instead, where DuckDB's error is about a column's name: a dotted name left unquoted
    (``init.gamma`` reads as column ``gamma`` of a table ``init``) is written in double quotes; a name given
    without its section (``gamma``) is the column ending so (``"init.gamma"``), else the closest. Empty for any
    other error."""
    names = [n for (n,) in con.execute("SELECT DISTINCT column_name FROM information_schema.columns WHERE "
                                       "table_name IN ('runs', 'metrics', 'offsets') ORDER BY 1").fetchall()]
    if table := re.match(r'Binder Error: Referenced table "([^"]+)" not found', error):
        dotted = [n for n in names if n.startswith(f"{table[1]}.")]
        used = [n for n in dotted if re.search(rf'(?<!["\w.]){re.escape(n)}(?![\w.-])', sql)] or dotted[:3]
        return f"; a column whose name holds a dot is written in double quotes: {_quoted(used, ', ')}" if used else ""
    if column := re.match(r'Binder Error: (?:Referenced column "([^"]+)" not found|.* does not have a column '
                          r'named "([^"]+)")', error):
        close = _close_names(column[1] or column[2], names)
        return f"; did you mean {_quoted(close, ' or ')}?" if close else \
            "; DESCRIBE runs (or metrics, offsets) lists a table's columns"
    return ""


def _close_names(name: str, names: list[str]) -> list[str]:
    """The columns ``name`` most likely meant: those whose last dotted part holds it as a word (``gamma``:
    ``init.gamma``; ``lr``: ``train.base_lr``), else the one closest in spelling, as a whole or by its last part."""
    if words := word_matches(name, names):
        return words
    last = {n: n.rsplit(".", 1)[-1] for n in names}
    close = difflib.get_close_matches(name, names, n=1) or difflib.get_close_matches(name, set(last.values()), n=1)
    return [n for n in names if n in close or last[n] in close][:3]


def _quoted(names: list[str], sep: str) -> str:
    """Column names as SQL writes them: in double quotes."""
    return sep.join(f'"{n}"' for n in names)
