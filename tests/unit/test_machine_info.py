"""What the machine is (reasonlab.numerics) and ``reasonlab info``, which prints it."""

from __future__ import annotations

import torch
from typer.testing import CliRunner

from reasonlab import numerics
from reasonlab.cli import app

EPYC = {"model name": "AMD EPYC", "flags": "fpu sse2 avx2 avx512f avx512_bf16 fma"}


def test_the_extensions_are_read_from_the_cpus_flags(monkeypatch):
    monkeypatch.setattr(numerics, "_cpuinfo", lambda: EPYC)
    m = numerics.machine()
    assert m["cpu"] == "AMD EPYC" and m["extensions"] == ["AVX2", "AVX-512", "AVX512-BF16"]
    monkeypatch.setattr(numerics, "_cpuinfo", lambda: {"model name": "Xeon", "flags": "avx2 avx512f amx_bf16 amx_tile"})
    assert numerics.machine()["extensions"] == ["AVX2", "AVX-512", "AMX-BF16"]
    monkeypatch.setattr(numerics, "_cpuinfo", dict)  # no /proc/cpuinfo: the platform's name, no extensions
    assert numerics.machine()["extensions"] == [] and numerics.machine()["cpu"]


def test_precision_auto_stays_fp32_on_a_cpu_and_says_why():
    assert numerics.auto_precision({"extensions": ["AVX2"]}) == (
        "fp32", "this CPU has no bf16 matrix units (AVX512-BF16 or AMX)")
    precision, why = numerics.auto_precision({"extensions": ["AVX-512", "AMX-BF16"]})
    assert precision == "fp32" and "AMX-BF16" in why and "not validated" in why
    assert numerics.auto_precision({"extensions": []}, "cuda")[0] == "bf16"


def test_a_matmul_peak_is_a_positive_rate():
    assert numerics.matmul_peak(torch.float32, n=64, seconds=0.01) > 0


def test_info_names_the_cpu_its_extensions_and_what_auto_picks(monkeypatch):
    monkeypatch.setattr(numerics, "_cpuinfo", lambda: EPYC)
    done = CliRunner().invoke(app, ["info", "--no-measure"], env={"COLUMNS": "200"})
    assert done.exit_code == 0, done.output
    assert "CPU: AMD EPYC" in done.output and "extensions: AVX2, AVX-512, AVX512-BF16" in done.output
    assert "precision auto: fp32 (this CPU has AVX512-BF16" in done.output and "GFLOP/s" not in done.output


def test_info_says_which_gpu_train_device_auto_would_use(monkeypatch):
    monkeypatch.setattr(torch.version, "cuda", None)
    assert numerics.gpu().startswith(f"none: torch {torch.__version__} is a CPU build")
    monkeypatch.setattr(torch.version, "cuda", "12.4")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert numerics.gpu().startswith("none visible (torch built for CUDA 12.4")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda i: f"GPU {i}")
    assert numerics.gpu() == "GPU 0, GPU 1 (CUDA 12.4)"
    done = CliRunner().invoke(app, ["info", "--no-measure"], env={"COLUMNS": "200"})
    assert done.exit_code == 0 and "GPU: GPU 0, GPU 1 (CUDA 12.4" in done.output, done.output
    assert "precision auto: bf16 (on a CUDA device auto trains in bf16 autocast)" in done.output, done.output
