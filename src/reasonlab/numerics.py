"""CPU numerics for training and evaluation: flush-to-zero and the allocator's setting, both scoped, and the
machine facts that decide rounding.

Small-init plateaus and the softmax of never-seen classes make tensors denormal (nonzero, below 1.2e-38 in
magnitude): Adam's second moments of tiny gradients, probabilities e^-90 below the maximum. A CPU GEMM on
denormal inputs runs ~100x slower (docs/performance.md). Flushing them to zero changes results only below that
magnitude. The setting is process-wide CPU state, so it is turned on for the duration of a run and restored
after, leaving a user's own process as it was.
"""

from __future__ import annotations

import ctypes
import os
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


class _MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                                    "fsmblks", "uordblks", "fordblks", "keepcost")]


def _libc() -> ctypes.CDLL | None:
    """glibc, if this process runs on it (the allocator settings below are glibc's)."""
    try:
        libc = ctypes.CDLL(None)
    except OSError:
        return None
    return libc if hasattr(libc, "mallopt") and hasattr(libc, "mallinfo2") else None


def mapped_blocks() -> int | None:
    """How many allocations glibc holds as separate memory maps now (None off glibc)."""
    libc = _libc()
    if libc is None:
        return None
    libc.mallinfo2.restype = _MallInfo2
    return int(libc.mallinfo2().hblks)


M_TRIM_THRESHOLD, M_MMAP_MAX = -1, -4  # mallopt's parameter numbers (malloc.h)
# What glibc starts with, or what the environment told it at start (MALLOC_TRIM_THRESHOLD_, MALLOC_MMAP_MAX_).
ALLOCATOR_START = {param: int(v) if (v := os.environ.get(name, "")).isdigit() else default
                   for param, name, default in ((M_TRIM_THRESHOLD, "MALLOC_TRIM_THRESHOLD_", 128 * 1024),
                                                (M_MMAP_MAX, "MALLOC_MMAP_MAX_", 65536))}


@contextmanager
def keep_freed_memory() -> Iterator[None]:
    """glibc's allocator keeps freed memory for reuse during a run: no allocation gets its own memory map
    (M_MMAP_MAX 0) and the heap is not given back below 16 GiB (M_TRIM_THRESHOLD). Otherwise every activation
    larger than its mmap threshold (at most 32 MiB) is mapped, zeroed by the kernel and unmapped again at every
    step: 5-7 % of a step at the modular cell's shape (docs/performance.md). A process holds its peak anyway while
    it trains. Restored after to what the process started with; glibc's self-tuning mmap threshold stays off
    once a setting is made. Nothing off glibc."""
    libc = _libc()
    if libc is None:
        yield
        return
    libc.mallopt(M_MMAP_MAX, 0)
    libc.mallopt(M_TRIM_THRESHOLD, 16 * 2**30)
    try:
        yield
    finally:
        for param, value in ALLOCATOR_START.items():
            libc.mallopt(param, value)
        libc.malloc_trim(0)


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
