"""Phase diagrams: how ``reasonlab phase`` reads a sweep of one task kind into cells and draws them.

A task kind draws its own (``Kind.draw_phase``, over its default ``phase_axes``, reading its ``phase_options``);
``label_phase`` suits any task and is the default: per cell, the mean of one numeric results column and the
cell's label by the kind's ``classify``. ``phase_rule`` gathers a kind's parts for the command, and serves a table
whose kind is not registered here with the label phase and the most common label.

Layer: report; imports plots (figures) and no task kind.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from reasonlab.errors import ConfigError
from reasonlab.plots.phase import plot_label_phase
from reasonlab.registry import KindOption, task_kinds
from reasonlab.terminal import counted

Drawn = tuple[list[Path], list[str]]


@dataclass(frozen=True)
class PhaseRule:
    """What ``reasonlab phase`` draws: default axes, ``draw(rows, out_base, x, y, options, caption)``, the figure's
    file name from the options, and the options ``draw`` reads."""

    axes: tuple[str, str]
    draw: Callable[[list[dict], Path, str, str, dict, str], Drawn]
    name: Callable[[dict], str]
    options: tuple[KindOption, ...]


def _value_column(rows: list[dict], options: dict) -> str:
    column = options.get("value") or next((k for k, v in rows[0].items() if k.startswith("final.")
                                           and isinstance(v, int | float) and not isinstance(v, bool)), None)
    if column is None or column not in rows[0]:
        raise ConfigError(f"--value: {column!r} is not a numeric column of the results table; name one "
                          "(e.g. --value final.test_acc)")
    return column


def most_common_label(cell: list[dict[str, Any]]) -> str:
    return Counter(str(r.get("label")) for r in cell).most_common(1)[0][0]


def label_phase(rows: list[dict], out_base: Path, x: str, y: str, options: dict, caption: str,
                classify: Callable[[list[dict[str, Any]]], str] = most_common_label) -> Drawn:
    """Per (x, y) cell: the mean of one results column over its runs and the cell's label (``classify``)."""
    for axis in (x, y):
        if rows and axis not in rows[0]:
            raise ConfigError(f"--x/--y: no column {axis!r} in the results table")
    column = _value_column(rows, options)
    cells: dict[tuple[float, float], list[dict[str, Any]]] = {}
    for r in rows:
        cells.setdefault((float(r[x]), float(r[y])), []).append(r)
    xs, ys = sorted({k[0] for k in cells}), sorted({k[1] for k in cells})
    values = np.full((len(ys), len(xs)), np.nan)
    labels = [["" for _ in xs] for _ in ys]
    lines = []
    for (cx, cy), runs in sorted(cells.items()):
        i, j = ys.index(cy), xs.index(cx)
        finite = [float(r[column]) for r in runs if r.get(column) is not None]
        values[i, j] = float(np.mean(finite)) if finite else np.nan
        labels[i][j] = classify(runs)
        lines.append(f"{x}={cx:g} {y}={cy:g}: {labels[i][j]} ({column} {values[i, j]:.3f}; "
                     f"{counted(len(runs), 'run')})")
    paths = plot_label_phase(xs, ys, values, labels, out_base, options.get("profiles", "") + f"Mean of {column} "
                             "over the runs of each cell." + caption, x, y, column)
    return paths, lines


VALUE_OPTION = KindOption("value", "the results column shown per cell (default: the first final.* column)", str,
                          "COLUMN")
LABEL_PHASE = PhaseRule(("init.gamma", "model.depth"), label_phase, lambda options: "phase", (VALUE_OPTION,))


def phase_rule(kind: str | None) -> PhaseRule:
    """The phase diagram of a task kind (its axes, ``draw_phase``, ``phase_name``, ``phase_options``); the label
    phase for a kind not registered here."""
    entry = task_kinds().get(str(kind))
    if entry is None:
        return LABEL_PHASE
    return PhaseRule(entry.phase_axes, entry.draw_phase, entry.phase_name, entry.phase_options)
