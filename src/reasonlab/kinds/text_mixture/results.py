"""The language mixture's own results columns: ΔL̄ per split (``delta_L_window.train``).

Layer: sweep (by its file name).
"""

from __future__ import annotations

from typing import Any

from reasonlab.sweep.results import flatten

MAIN_COLUMNS = ("delta_L_window.train",)


def columns(summary: dict[str, Any]) -> dict[str, Any]:
    return flatten(summary.get("delta_L_window") or {}, "delta_L_window.")
