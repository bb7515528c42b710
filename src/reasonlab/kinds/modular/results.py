"""The modular run's own results columns: its plateau exits (training-loss levels under chance) with the four
sets' last-shot accuracies there (``plateau.left.last_shot.ood_test``, ...).

Layer: sweep (by its file name).
"""

from __future__ import annotations

from typing import Any

from reasonlab.sweep.results import point_columns

MAIN_COLUMNS = ("plateau.left.step", "plateau.half.step")


def columns(summary: dict[str, Any]) -> dict[str, Any]:
    return point_columns(summary, "plateau", ("epoch", "step", "lr_sum", "loss"), "last_shot")
