"""Checkpoints: weights in safetensors, optimizer state loaded with ``weights_only=True``, a JSON marker last.

A checkpoint counts only once its ``step-N.json`` marker exists; the marker is written after the weights and the
optimizer state, each by atomic rename, so a kill at any point leaves either a whole checkpoint or none.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import torch
from safetensors.torch import load as st_load
from safetensors.torch import save as st_save
from torch import nn

from reasonlab.store import atomic_write_bytes, write_json


def _weights(model: nn.Module) -> dict[str, torch.Tensor]:
    # safetensors refuses shared storage (tied head): keep each tensor once, contiguous, on the CPU
    seen, out = set(), {}
    for name, t in model.state_dict().items():
        if t.data_ptr() in seen:
            continue
        seen.add(t.data_ptr())
        out[name] = t.detach().cpu().contiguous()
    return out


def save_checkpoint(ckpt_dir: Path, step: int, state: dict, model: nn.Module, optimizer: torch.optim.Optimizer,
                    keep_optimizer: int = 1) -> None:
    ckpt_dir.mkdir(exist_ok=True)
    atomic_write_bytes(ckpt_dir / f"step-{step}.safetensors", st_save(_weights(model)))
    buf = io.BytesIO()
    torch.save(optimizer.state_dict(), buf)
    atomic_write_bytes(ckpt_dir / f"step-{step}.optim.pt", buf.getvalue())
    write_json(ckpt_dir / f"step-{step}.json", {"step": step, **state})
    for old in sorted(complete_steps(ckpt_dir))[:-keep_optimizer]:
        (ckpt_dir / f"step-{old}.optim.pt").unlink(missing_ok=True)


def save_best(ckpt_dir: Path, model: nn.Module, state: dict) -> None:
    """The weights of the best evaluation so far (``best.safetensors``), then its marker ``best.json``."""
    ckpt_dir.mkdir(exist_ok=True)
    atomic_write_bytes(ckpt_dir / "best.safetensors", st_save(_weights(model)))
    write_json(ckpt_dir / "best.json", state)


def complete_steps(ckpt_dir: Path) -> list[int]:
    if not ckpt_dir.is_dir():
        return []
    steps = []
    for marker in ckpt_dir.glob("step-*.json"):
        step = int(marker.stem.split("-")[1])
        if (ckpt_dir / f"step-{step}.safetensors").is_file():
            steps.append(step)
    return sorted(steps)


def load_weights(path: Path, model: nn.Module) -> None:
    tensors = st_load(Path(path).read_bytes())
    missing, unexpected = model.load_state_dict(tensors, strict=False)
    tied = {n for n in missing if n == "head.weight" and getattr(model.cfg, "tied_head", False)}
    if set(missing) - tied or unexpected:
        raise ValueError(f"{path}: weights do not match the model (missing {sorted(missing)[:3]}, "
                         f"unexpected {sorted(unexpected)[:3]})")


def load_latest(ckpt_dir: Path, model: nn.Module, optimizer: torch.optim.Optimizer) -> dict | None:
    """Restore the newest checkpoint that has optimizer state; None when there is none."""
    for step in reversed(complete_steps(ckpt_dir)):
        optim_path = ckpt_dir / f"step-{step}.optim.pt"
        if not optim_path.is_file():
            continue
        load_weights(ckpt_dir / f"step-{step}.safetensors", model)
        optimizer.load_state_dict(torch.load(optim_path, weights_only=True, map_location="cpu"))
        return json.loads((ckpt_dir / f"step-{step}.json").read_text())
    return None


def checkpoint_at(run_dir: Path, fraction: float) -> tuple[int, Path]:
    """(epoch, weights file) of a run's saved checkpoint nearest to ``fraction`` of its training."""
    ckpt = Path(run_dir) / "checkpoints"
    marks = [json.loads((ckpt / f"step-{s}.json").read_text()) for s in complete_steps(ckpt)]
    if not marks:
        raise ValueError(f"{ckpt}: no complete checkpoint")
    total = max(m["epoch"] for m in marks)
    best = min(marks, key=lambda m: abs(m["epoch"] - fraction * total))
    return best["epoch"], ckpt / f"step-{best['step']}.safetensors"
