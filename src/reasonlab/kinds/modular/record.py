"""The modular kind's part of ``summary.json``: the plateau exits (the training loss first at 0.9 and 0.5 of
ln p, with the epoch, step, Σlr, that loss and the four sets' last-shot accuracy there)."""

from __future__ import annotations

from reasonlab.record_schemas import KindReport


class PlateauRecord(KindReport):
    epoch: int
    step: int
    lr_sum: float | None
    loss: float
    last_shot: dict[str, float] = {}


class ModularReport(KindReport):
    plateau: dict[str, PlateauRecord | None] | None = None
