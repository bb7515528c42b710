"""The parity run's own part of ``summary.json``: its outcome's label and generalization gap, typed, so every
summary of the kind is checked against it when it is written and read.

Layer: records (by its file name).
"""

from __future__ import annotations

from reasonlab.record_schemas import KindReport


class ParityOutcome(KindReport):
    label: str
    gap: float | None


class ParityReport(KindReport):
    outcome: ParityOutcome
