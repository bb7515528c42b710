"""Where a run computes and in what precision: its device (``train.device``) and its autocast
(``train.precision``)."""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext

import torch

from reasonlab.config import ConfigError, TrainConfig
from reasonlab.numerics import auto_precision


def resolve_device(name: str) -> torch.device:
    if name == "cuda" and not torch.cuda.is_available():
        raise ConfigError("train.device: cuda requested but no CUDA device is visible; use train.device=cpu")
    return torch.device("cuda" if name == "auto" and torch.cuda.is_available() else name if name != "auto" else "cpu")


def autocast(cfg: TrainConfig, device: torch.device) -> AbstractContextManager:
    """bf16 autocast when the run asks for it (``auto``: where ``numerics.auto_precision`` picks bf16), else
    nothing."""
    bf16 = cfg.precision == "bf16" or (cfg.precision == "auto" and auto_precision(device=device.type)[0] == "bf16")
    return torch.autocast(device.type, dtype=torch.bfloat16) if bf16 else nullcontext()
