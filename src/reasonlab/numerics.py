"""CPU numerics for training and evaluation: flush-to-zero, scoped, and the machine facts that decide rounding.

Small-init plateaus and the softmax of never-seen classes make tensors denormal (nonzero, below 1.2e-38 in
magnitude): Adam's second moments of tiny gradients, probabilities e^-90 below the maximum. A CPU GEMM on
denormal inputs runs ~100x slower (docs/performance.md). Flushing them to zero changes results only below that
magnitude. The setting is process-wide CPU state, so it is turned on for the duration of a run and restored
after, leaving a user's own process as it was.
"""

from __future__ import annotations

import math
import platform
import time
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


EXTENSIONS = {"avx2": "AVX2", "avx512f": "AVX-512", "avx512_bf16": "AVX512-BF16", "amx_bf16": "AMX-BF16"}
BF16_UNITS = ("AVX512-BF16", "AMX-BF16")  # the extensions with bf16 matrix arithmetic


def _cpuinfo() -> dict[str, str]:
    """The first processor's fields of ``/proc/cpuinfo`` (empty where the file is missing)."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return {}
    fields = (line.split(":", 1) for line in text.split("\n\n", 1)[0].splitlines() if ":" in line)
    return {key.strip(): value.strip() for key, value in fields}


def machine() -> dict[str, str | list[str]]:
    """The CPU model, the kernel family torch dispatches to on it (e.g. AVX512) and the SIMD and matrix extensions
    it has: with the thread count, what besides the config and seed decides a run's float rounding and speed, so
    two runs' numbers can be compared knowingly."""
    info = _cpuinfo()
    flags = set(info.get("flags", "").split())
    return {"cpu": info.get("model name") or platform.processor() or platform.machine(),
            "kernels": torch.backends.cpu.get_cpu_capability(),
            "extensions": [name for flag, name in EXTENSIONS.items() if flag in flags]}


def auto_precision(m: dict | None = None, device: str = "cpu") -> tuple[str, str]:
    """What ``train.precision: auto`` trains in on ``device`` (``cuda`` or ``cpu``: this CPU), and why: the one
    rule the trainer's autocast follows."""
    if device == "cuda":
        return "bf16", "on a CUDA device auto trains in bf16 autocast"
    units = [e for e in (m or machine())["extensions"] if e in BF16_UNITS]
    if not units:
        return "fp32", "this CPU has no bf16 matrix units (AVX512-BF16 or AMX)"
    return "fp32", (f"this CPU has {' and '.join(units)}, but bf16 on a CPU is not validated against fp32 yet, so "
                    "auto picks bf16 on CUDA only; set train.precision=bf16 to choose it")


def matmul_peak(dtype: torch.dtype, n: int = 2048, seconds: float = 0.5) -> float:
    """GFLOP/s of an n×n by n×n matmul in ``dtype`` on this process's threads, the best of repeats over about
    ``seconds``: the ceiling a training step's GEMMs can reach here."""
    a, b = torch.randn(n, n).to(dtype), torch.randn(n, n).to(dtype)
    torch.mm(a, b)  # the first call pays for the kernel's set-up
    best, spent = math.inf, 0.0
    while spent < seconds:
        start = time.perf_counter()
        torch.mm(a, b)
        took = time.perf_counter() - start
        best, spent = min(best, took), spent + took
    return 2 * n ** 3 / best / 1e9


def describe_machine(m: dict[str, str] | None = None, threads: int | None = None) -> str:
    """``machine()`` and a thread count in one phrase (this process's by default; a run summary's when given)."""
    m = m or machine()
    return f"{m['cpu']} ({m['kernels']}), {torch.get_num_threads() if threads is None else threads} thread(s)"


def gpu() -> str:
    """The CUDA devices torch sees, else why there are none (a CPU build of torch, or a CUDA build that sees no
    device)."""
    if torch.version.cuda is None:
        return f"none: torch {torch.__version__} is a CPU build (train.device=cuda needs a CUDA build of torch)"
    if not torch.cuda.is_available():
        return f"none visible (torch built for CUDA {torch.version.cuda})"
    names = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
    return f"{', '.join(names)} (CUDA {torch.version.cuda})"
