"""The language mixture's part of ``summary.json``: ΔL̄ per source over its window of training."""

from __future__ import annotations

from reasonlab.record_schemas import KindReport


class TextMixtureReport(KindReport):
    delta_L_window: dict[str, float | None] | None = None  # noqa: N815 - the stored field's name
