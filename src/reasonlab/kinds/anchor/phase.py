"""The anchor task's phase diagram: cells by the paper's protocol (best over learning rates, mean over seeds) for
one held-out pair, drawn as accuracy and outcome maps.

Layer: report (by its file name).
"""

from __future__ import annotations

from pathlib import Path

from reasonlab.kinds.anchor.cells import held_out_pair, phase_cells, protocol_text
from reasonlab.kinds.anchor.config import Pair
from reasonlab.kinds.anchor.figures import plot_phase
from reasonlab.registry import KindOption
from reasonlab.report.phase import Drawn


def draw(rows: list[dict], out_base: Path, x: str, y: str, options: dict, caption: str) -> Drawn:
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


OPTIONS = (
    KindOption("pair", "held-out pair, e.g. 4-3 (4,3 also works; default: the runs' first held-out pair)", Pair.parse,
               "A1-A2"),
    KindOption("over_epochs", "each run's held-out accuracies as their max over evaluated epochs, not the final "
                              "epoch's"),
)


def name(options: dict) -> str:
    return f"phase{'-over-epochs' if options.get('over_epochs') else ''}"
