"""The parity phase diagram: per cell (γ × depth by default), the mean accuracy on one set of strings (``--split``)
over the cell's runs and their most common label.

Layer: report (by its file name).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np

from reasonlab.plots.phase import plot_label_phase
from reasonlab.registry import KindOption, one_of
from reasonlab.report.phase import Drawn


def draw(rows: list[dict], out_base: Path, x: str, y: str, options: dict, caption: str) -> Drawn:
    split = options.get("split", "held_out")
    column = f"final.{split}_acc"
    xs, ys = sorted({float(r[x]) for r in rows}), sorted({float(r[y]) for r in rows})
    values = np.full((len(ys), len(xs)), np.nan)
    labels = [["" for _ in xs] for _ in ys]
    lines = []
    for i, cy in enumerate(ys):
        for j, cx in enumerate(xs):
            runs = [r for r in rows if float(r[x]) == cx and float(r[y]) == cy]
            if runs:
                values[i, j] = np.mean([r[column] for r in runs])
                labels[i][j] = Counter(r["label"] for r in runs).most_common(1)[0][0]
                lines.append(f"{x}={cx:g} {y}={cy:g}: {labels[i][j]} ({split} accuracy {values[i, j]:.3f})")
    paths = plot_label_phase(xs, ys, values, labels, out_base, options.get("profiles", "") + "Parity: accuracy on "
                             f"the {split.replace('_', '-')} strings, mean over the cell's runs." + caption, x, y,
                             f"{split} accuracy")
    return paths, lines


OPTIONS = (KindOption("split", "the strings whose accuracy the cells show: held_out (the default) or seen",
                      one_of("held_out", "seen"), "[held_out|seen]"),)


def name(options: dict) -> str:
    return f"phase-{options.get('split', 'held_out')}"
