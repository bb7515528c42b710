"""The modular task's phase diagram: the four phases of spec §5 over tasks × data fraction, from the last-shot
accuracies at the final evaluation or at early stopping (``--at``).

Layer: report (by its file name).
"""

from __future__ import annotations

from pathlib import Path

from reasonlab.kinds.modular.evaluate import modular_cells
from reasonlab.kinds.modular.figures import plot_modular_phase
from reasonlab.registry import KindOption, one_of
from reasonlab.report.phase import Drawn

AXES = ("task.n_tasks", "task.alpha")


def draw(rows: list[dict], out_base: Path, x: str, y: str, options: dict, caption: str) -> Drawn:
    at = options.get("at", "final")
    cells = modular_cells(rows, x, y, at)
    paths = plot_modular_phase(cells, out_base, options.get("profiles", "") + f"Last-shot accuracy at {at}, mean "
                               "over seeds; thresholds 0.9 (fit), 0.8 (✓)." + caption, x, y)
    return paths, [f"{x}={c.x:g} {y}={c.y:g}: {c.label}{' (atypical)' if c.atypical else ''} "
                   + ", ".join(f"{k} {v:.3f}" for k, v in c.last_shot.items()) for c in cells]


OPTIONS = (KindOption("at", "final (the final evaluation, the default) or t_star (early stopping)",
                      one_of("final", "t_star"), "[final|t_star]"),)


def name(options: dict) -> str:
    return f"phase-{options.get('at', 'final')}"
