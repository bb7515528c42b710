"""Phase rules: how ``reasonlab phase`` reads a sweep of one task kind into cells and draws them.

A task kind's registry entry names its rule (``phase``). A rule has default axes and ``draw(rows, out_base, x, y,
options, caption) -> (figure paths, one line per cell)``. ``LABEL_PHASE`` suits any task: per cell, the mean of
one numeric results column and the most common outcome label.

Layer: report; imports evaluate (cells) and plots (figures).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from reasonlab.errors import ConfigError
from reasonlab.evaluate.modular import modular_cells
from reasonlab.evaluate.phase import held_out_pair, phase_cells, protocol_text
from reasonlab.plots.phase import plot_label_phase, plot_modular_phase, plot_phase

Drawn = tuple[list[Path], list[str]]


@dataclass(frozen=True)
class PhaseRule:
    axes: tuple[str, str]
    draw: Callable[[list[dict], Path, str, str, dict, str], Drawn]
    name: Callable[[dict], str] = lambda options: "phase"  # the figure's file name (before any --where suffix)


def _anchor(rows: list[dict], out_base: Path, x: str, y: str, options: dict, caption: str) -> Drawn:
    over_epochs = options.get("over_epochs", False)
    pair = options.get("pair") or held_out_pair(rows)  # by default the runs' own held-out pair
    cells = phase_cells(rows, pair, x, y, over_epochs=over_epochs)
    paths = plot_phase(cells, out_base, options.get("profiles", "") + protocol_text(over_epochs) + caption, pair, x, y)
    lines = []
    for c in cells:
        spread = "" if c.inferential_range is None or c.n_seeds < 2 else \
            f" [{c.inferential_range[0]:.3f}–{c.inferential_range[1]:.3f}]"
        lines.append(f"{x}={c.x:g} {y}={c.y:g}: {c.label} (inferential {c.inferential:.3f}{spread}, symmetric "
                     f"{'—' if c.symmetric is None else f'{c.symmetric:.3f}'}, seen {c.seen:.3f}; "
                     f"{c.n_seeds} seeds)")
    return paths, lines


def _modular(rows: list[dict], out_base: Path, x: str, y: str, options: dict, caption: str) -> Drawn:
    at = options.get("at", "final")
    cells = modular_cells(rows, x, y, at)
    paths = plot_modular_phase(cells, out_base, options.get("profiles", "") + f"Last-shot accuracy at {at}, mean "
                               "over seeds; thresholds 0.9 (fit), 0.8 (✓)." + caption, x, y)
    return paths, [f"{x}={c.x:g} {y}={c.y:g}: {c.label}{' (atypical)' if c.atypical else ''} "
                   + ", ".join(f"{k} {v:.3f}" for k, v in c.last_shot.items()) for c in cells]


def _value_column(rows: list[dict], options: dict) -> str:
    column = options.get("value") or next((k for k, v in rows[0].items() if k.startswith("final.")
                                           and isinstance(v, int | float) and not isinstance(v, bool)), None)
    if column is None or column not in rows[0]:
        raise ConfigError(f"--value: {column!r} is not a numeric column of the results table; name one "
                          "(e.g. --value final.test_acc)")
    return column


def _by_label(rows: list[dict], out_base: Path, x: str, y: str, options: dict, caption: str) -> Drawn:
    """Per (x, y) cell: the mean of one results column over its runs and their most common label."""
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
        labels[i][j] = Counter(str(r.get("label")) for r in runs).most_common(1)[0][0]
        lines.append(f"{x}={cx:g} {y}={cy:g}: {labels[i][j]} ({column} {values[i, j]:.3f}; {len(runs)} runs)")
    paths = plot_label_phase(xs, ys, values, labels, out_base, options.get("profiles", "") + f"Mean of {column} "
                             "over the runs of each cell." + caption, x, y, column)
    return paths, lines


ANCHOR_PHASE = PhaseRule(("init.gamma", "model.depth"), _anchor,
                         lambda o: f"phase{'-over-epochs' if o.get('over_epochs') else ''}")
MODULAR_PHASE = PhaseRule(("task.n_tasks", "task.alpha"), _modular, lambda o: f"phase-{o.get('at', 'final')}")
LABEL_PHASE = PhaseRule(("init.gamma", "model.depth"), _by_label)
