"""The language mixture's history rows on its card: ΔL̄ per split.

Layer: report (by its file name).
"""

from __future__ import annotations


def history(summary: dict) -> list[tuple[str, str]]:
    return [(f"ΔL̄ {split} (5–50 % of steps)", "—" if value is None else f"{value:.3f}")
            for split, value in (summary.get("delta_L_window") or {}).items()]
