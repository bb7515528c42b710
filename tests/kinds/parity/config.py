"""The parity task's ``task:`` section: its kind's name and every number that changes its data (the run id is a
hash of the resolved config).

Layer: config (by its file name).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from reasonlab.config import StrictModel


class ParityTaskConfig(StrictModel):
    """Bit strings of ``n_bits`` bits; ``held_out`` of them are never trained on."""

    kind: Literal["parity"] = Field("parity", description="the task kind: the parity of a bit string")
    n_bits: int = Field(6, ge=2, le=16, description="bits per string")
    held_out: float = Field(0.25, gt=0, lt=1, description="fraction of bit strings never trained on")
    repeats: int = Field(8, ge=1, description="copies of each training string per epoch")
