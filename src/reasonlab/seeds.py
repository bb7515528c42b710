"""Independent, reproducible seeds for the random streams of a run (data, init, shuffling, ...).

Layer: the ground floor (no reasonlab imports); tasks, models' builders and the trainer all draw from it.
"""

from __future__ import annotations

import hashlib


def subseed(seed: int, stream: str) -> int:
    """Independent, reproducible seed for one random stream (data, init, shuffling) of a run."""
    return int.from_bytes(hashlib.sha256(f"{seed}:{stream}".encode()).digest()[:8], "little") >> 1
