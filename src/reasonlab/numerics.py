"""CPU numerics for training and evaluation: flush-to-zero, scoped.

Small-init plateaus and the softmax of never-seen classes make tensors denormal (nonzero, below 1.2e-38 in
magnitude): Adam's second moments of tiny gradients, probabilities e^-90 below the maximum. A CPU GEMM on
denormal inputs runs ~100x slower (docs/performance.md). Flushing them to zero changes results only below that
magnitude. The setting is process-wide CPU state, so it is turned on for the duration of a run and restored
after, leaving a user's own process as it was.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch


def flushing() -> bool:
    """Whether the CPU flushes denormals now (a denormal times one comes out as zero)."""
    return float(torch.tensor([1e-39], dtype=torch.float32).mul(1.0)) == 0.0


@contextmanager
def flush_denormals() -> Iterator[None]:
    before = flushing()
    torch.set_flush_denormal(True)
    try:
        yield
    finally:
        torch.set_flush_denormal(before)
