"""The parity run's own results columns: the generalization gap, and how far the held-out strings' accuracy
stands above chance (½).

Layer: sweep (by its file name).
"""

from __future__ import annotations

from typing import Any

MAIN_COLUMNS = ("final.held_out_acc", "parity.gap", "parity.above_chance")


def columns(summary: dict[str, Any]) -> dict[str, Any]:
    held_out = summary["final"].get("held_out_acc")
    return {"parity.gap": summary["outcome"].get("gap"),
            "parity.above_chance": None if held_out is None else held_out - 0.5}
