"""A table of runs on a screen (``reasonlab results``, and a sweep once its runs are done): one a reader takes in at
a glance at any width, in a terminal or piped.

A results table is wide (a sweep's axes and figures: ``final.reasoning_train_acc`` and the like; ``SELECT *``:
every field of every run) and a screen is 80 to 120 columns. Squeezed into it, a table's headers break into
4-character pieces, its values fold (``memo/rizi/ng``) and, with enough columns, every column is cut to nothing.
So a table is printed as it is only when it fits unfolded; otherwise it is turned on its side: a row per field, a
column per run (headed by its run id), as many runs side by side as fit, the rest in further blocks. Piped, it is
plain aligned text, one line per run, whatever its width.

Layer: report.
"""

from __future__ import annotations

from typing import Any

from rich.cells import cell_len
from rich.console import Group, RenderableType
from rich.table import Table

from reasonlab.sweep.results import format_cell
from reasonlab.terminal import printable

# A run's column in the turned table, when runs are packed side by side: a longer value folds inside it.
PACKED_WIDTH = 20


def results_view(columns: list[str], rows: list[tuple[Any, ...]], width: int, title: str | None = None
                 ) -> RenderableType:
    """The table of ``rows`` (cells as ``format_cell`` prints them) for a screen ``width`` columns wide: as it is
    if it fits without folding a cell, else turned on its side (a row per column, a column per row)."""
    cells = [[format_cell(v) for v in row] for row in rows]
    if _width([columns, *cells]) <= width:
        tables = [_table(title, columns)]
        for row in cells:
            tables[0].add_row(*row)
    else:
        tables = _turned(columns, cells, width, title)
    if not rows:
        tables[-1].caption = "no rows"
    return Group(*tables)


def plain_view(columns: list[str], rows: list[tuple[Any, ...]]) -> str:
    """The table as plain text for a pipe or a file: a header line, then one line per row, columns aligned by spaces,
    no rule, nothing folded or turned (a pipe has no width; ``less -S`` scrolls it, ``grep`` keeps a run's line
    whole). Cells as ``format_cell`` prints them, control characters escaped; an empty table prints its header."""
    lines = [[printable(c) for c in columns], *([printable(format_cell(v)) for v in row] for row in rows)]
    widths = _column_widths(lines)
    return "".join("  ".join(cell + " " * (w - cell_len(cell)) for cell, w in zip(line, widths, strict=True)).rstrip()
                   + "\n" for line in lines)


def _width(lines: list[list[str]]) -> int:
    """The width of a boxed table of these lines (its header, then its rows) with no cell folded: each column as
    wide as its widest cell, one space of padding each side, a rule between columns and at both edges."""
    widths = _column_widths(lines)
    return sum(widths) + 3 * len(widths) + 1


def _column_widths(lines: list[list[str]]) -> list[int]:
    """Each column's width: its widest cell over these lines, in terminal cells."""
    return [max(cell_len(line[i]) for line in lines) for i in range(len(lines[0]))]


def _table(title: str | None, columns: list[str], names: bool = False) -> Table:
    """A boxed table whose cells fold when they must; with ``names``, its first column (the field names of a turned
    table) never does, so a narrow screen folds a value rather than the name that says what it is."""
    table = Table(title=title, title_justify="left")
    for i, name in enumerate(columns):
        table.add_column(name, overflow="fold", no_wrap=names and i == 0)
    return table


def _turned(columns: list[str], cells: list[list[str]], width: int, title: str | None) -> list[Table]:
    """The table on its side, in blocks of as many rows as fit side by side: each row a column headed by its run
    id (where the table has one; else its number), each of the other columns a row."""
    key = columns.index("run_id") if "run_id" in columns else None
    fields = [c for i, c in enumerate(columns) if i != key]
    heads = [row[key] if key is not None else str(n) for n, row in enumerate(cells, 1)]
    values = [[v for i, v in enumerate(row) if i != key] for row in cells]
    corner = "run_id" if key is not None else "row"
    names = max(cell_len(c) for c in [corner, *fields]) + 4  # the names' column, its padding and both edges
    needs = [min(PACKED_WIDTH, max(cell_len(c) for c in [head, *column])) + 3
             for head, column in zip(heads, values, strict=True)]
    blocks = _blocks(names, needs, width)
    tables = []
    for block in blocks:
        where = _span(block, "run" if key is not None else "row", len(heads)) if len(blocks) > 1 else None
        table = _table(" — ".join(t for t in (title, where) if t) or None, [corner, *(heads[r] for r in block)],
                       names=True)
        for j, field in enumerate(fields):
            table.add_row(field, *(values[r][j] for r in block))
        tables.append(table)
    return tables


def _blocks(start: int, needs: list[int], width: int) -> list[list[int]]:
    """The rows of a turned table in blocks that fit ``width``: each block's columns (``needs`` wide each) after
    one ``start`` wide; at least one row a block, and one empty block for no rows."""
    blocks: list[list[int]] = [[]]
    used = start
    for r, need in enumerate(needs):
        if blocks[-1] and used + need > width:
            blocks.append([])
            used = start
        blocks[-1].append(r)
        used += need
    return blocks


def _span(block: list[int], noun: str, total: int) -> str:
    """Which rows a block of a turned table holds: ``runs 1–4 of 5``, ``run 5 of 5``."""
    first, last = block[0] + 1, block[-1] + 1
    return f"{noun}s {first}–{last} of {total}" if last > first else f"{noun} {first} of {total}"
