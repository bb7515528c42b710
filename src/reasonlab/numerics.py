"""CPU numerics for training and evaluation: flush-to-zero, scoped, and the machine facts that decide rounding.

Small-init plateaus and the softmax of never-seen classes make tensors denormal (nonzero, below 1.2e-38 in
magnitude): Adam's second moments of tiny gradients, probabilities e^-90 below the maximum. A CPU GEMM on
denormal inputs runs ~100x slower (docs/performance.md). Flushing them to zero changes results only below that
magnitude. The setting is process-wide CPU state, so it is turned on for the duration of a run and restored
after, leaving a user's own process as it was.
"""

from __future__ import annotations

import platform
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

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


def machine() -> dict[str, str]:
    """The CPU model and the kernel family torch dispatches to on it (e.g. AVX512): with the thread count, what
    besides the config and seed decides a run's float rounding, so two runs' numbers can be compared knowingly."""
    try:
        cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                    if line.startswith("model name")), "")
    except OSError:
        cpu = ""
    return {"cpu": cpu or platform.processor() or platform.machine(),
            "kernels": torch.backends.cpu.get_cpu_capability()}


def describe_machine(m: dict[str, str] | None = None, threads: int | None = None) -> str:
    """``machine()`` and a thread count in one phrase (this process's by default; a run summary's when given)."""
    m = m or machine()
    return f"{m['cpu']} ({m['kernels']}), {torch.get_num_threads() if threads is None else threads} thread(s)"
