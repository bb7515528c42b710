"""The anchor run's own results columns: each held-out pair's outcome and the escape points.

Layer: sweep (by its file name).
"""

from __future__ import annotations

from typing import Any

from reasonlab.sweep.results import flatten, point_columns

MAIN_COLUMNS = ("final.seen_test_acc", "outcome.*.inferential", "outcome.*.symmetric", "escape.at50.lr_sum",
                "escape.at90.lr_sum")


def columns(summary: dict[str, Any]) -> dict[str, Any]:
    """``outcome.4-3.inferential``, ...; ``escape.at50.heldout.4-3.train_keys.inferential``, ..."""
    return {**flatten(summary.get("outcome", {}).get("pairs", {}), "outcome."),
            **point_columns(summary, "escape", ("epoch", "step", "lr_sum"), "heldout")}
