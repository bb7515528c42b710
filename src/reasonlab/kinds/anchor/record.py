"""The anchor kind's part of ``summary.json``: each held-out pair's outcome and the escape points (the seen-pair
accuracy first at 0.5 and 0.9, with the epoch, step and Σlr), typed for every reader of a finished run."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from reasonlab.record_schemas import KindReport


class PairRecord(KindReport):
    label: str
    clean: bool
    inferential: float | None
    symmetric: float | None
    other: float | None
    symmetric_target: str
    modal_delta: int | None = None
    modal_mass: float | None = None


class AnchorOutcome(KindReport):
    label: str | None = None
    pairs: dict[str, PairRecord] | None = None


class EscapeRecord(KindReport):
    epoch: int
    step: int
    lr_sum: float | None
    heldout: dict[str, float] = {}


class AnchorReport(KindReport):
    outcome: AnchorOutcome
    escape: dict[Annotated[str, Field(pattern=r"^at\d{1,3}$")], EscapeRecord | None] | None = None
