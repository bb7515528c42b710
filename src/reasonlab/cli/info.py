"""``reasonlab info``: what this machine is and can do for a run, so every figure can name the CPU it came from."""

from __future__ import annotations

import platform
from typing import Annotated

import typer

from reasonlab.cli.common import console


def info(
    measure: Annotated[bool, typer.Option("--measure/--no-measure",
                                          help="time an fp32 and a bf16 matmul (about 2 s)")] = True,
) -> None:
    """Print the machine a run would train on: CPU, SIMD and matrix extensions, the GPU torch sees (if any),
    threads, flush-to-zero, what precision `auto` picks and why, and the measured fp32 and bf16 matmul peaks."""
    import torch

    from reasonlab.numerics import auto_precision, flushing, gpu, machine, matmul_peak
    from reasonlab.version import __version__

    m = machine()
    lines = [f"reasonlab {__version__} · Python {platform.python_version()} · torch {torch.__version__}",
             f"CPU: {m['cpu']}",
             f"extensions: {', '.join(m['extensions']) or 'none of AVX2, AVX-512, AVX512-BF16, AMX'} "
             f"(torch kernels: {m['kernels']})",
             f"GPU: {gpu()}",
             f"threads: {torch.get_num_threads()} (a run's train.threads sets its own)",
             f"flush-to-zero now: {'on' if flushing() else 'off'} (a run turns it on while it trains)",
             "precision auto: {} ({})".format(*auto_precision(m, "cuda" if torch.cuda.is_available() else "cpu"))]
    if measure:
        for dtype in (torch.float32, torch.bfloat16):
            lines.append(f"{str(dtype).removeprefix('torch.')} matmul peak: {matmul_peak(dtype):,.0f} GFLOP/s "
                         f"(2048², {torch.get_num_threads()} thread(s))")
    for line in lines:
        console.print(line, markup=False, highlight=False)
