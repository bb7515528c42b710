"""Checkpoints: weights in safetensors, optimizer state loaded with ``weights_only=True``, a JSON marker last.

Layer: store (checkpoints are files of the run directory: the trainer writes them, analyses read them).

A checkpoint counts only once its ``step-N.json`` marker exists; the marker is written after the weights and the
optimizer state, each by atomic rename, so a kill at any point leaves either a whole checkpoint or none. The
marker holds the SHA-256 of both files: a checkpoint damaged later (truncated, overwritten) is detected when a
run resumes, reported in one line with its path, and the run falls back to the previous good one (the two
newest keep their optimizer state). The markers' schemas and the checks that bind a marker to its run and its
weights are in ``reasonlab.checkpoint_checks``.
"""

from __future__ import annotations

import hashlib
import io
import pickle
import re
import warnings
from collections.abc import Callable
from pathlib import Path

import torch
from safetensors.torch import load as st_load
from safetensors.torch import save as st_save
from torch import nn

from reasonlab.checkpoint_checks import (
    MAX_HEADER_BYTES,
    BestMarker,
    Marker,
    SnapshotMarker,
    check_marker,
    read_marker,
)
from reasonlab.files import atomic_write_bytes, warn, write_json


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
                    keep_optimizer: int = 2, resume_only: bool = False) -> None:
    """A checkpoint at ``step``. One that is ``resume_only`` (a stop asked for, or wall time) serves only to resume
    from: the next checkpoint deletes it, so the checkpoints a run keeps are those of its cadence."""
    ckpt_dir.mkdir(exist_ok=True)
    weights = st_save(_weights(model))
    atomic_write_bytes(ckpt_dir / f"step-{step}.safetensors", weights)
    buf = io.BytesIO()
    torch.save(optimizer.state_dict(), buf)
    atomic_write_bytes(ckpt_dir / f"step-{step}.optim.pt", buf.getvalue())
    digests = {"weights": _sha256(weights), "optim": _sha256(buf.getvalue())}
    marker = {"step": step, **state, "sha256": digests} | ({"resume_only": True} if resume_only else {})
    Marker.model_validate(marker)
    write_json(ckpt_dir / f"step-{step}.json", marker)
    drop_resume_points(ckpt_dir, keep=step)
    for old in sorted(complete_steps(ckpt_dir))[:-keep_optimizer]:
        (ckpt_dir / f"step-{old}.optim.pt").unlink(missing_ok=True)


def drop_resume_points(ckpt_dir: Path, keep: int | None = None) -> None:
    """Delete the resume-only checkpoints (but the one at step ``keep``), each marker first: a checkpoint is
    either whole or not one."""
    for step in complete_steps(ckpt_dir):
        marker = ckpt_dir / f"step-{step}.json"
        try:
            resume_only = step != keep and read_marker(marker).get("resume_only") is True
        except ValueError:  # damaged: load_latest reports it and falls back
            continue
        if resume_only:
            for path in (marker, ckpt_dir / f"step-{step}.safetensors", ckpt_dir / f"step-{step}.optim.pt"):
                path.unlink(missing_ok=True)


def save_snapshot(ckpt_dir: Path, step: int, fraction: float, state: dict, model: nn.Module) -> None:
    """The weights at ``fraction`` of training (``snapshot-STEP.safetensors``, then its marker): for analyses at a
    chosen point, mid-epoch if need be. No optimizer state and another name, so resuming never starts from one."""
    ckpt_dir.mkdir(exist_ok=True)
    weights = st_save(_weights(model))
    atomic_write_bytes(ckpt_dir / f"snapshot-{step}.safetensors", weights)
    marker = {"step": step, "fraction": fraction, **state, "sha256": {"weights": _sha256(weights)}}
    SnapshotMarker.model_validate(marker)
    write_json(ckpt_dir / f"snapshot-{step}.json", marker)


def snapshot_steps(ckpt_dir: Path) -> dict[int, float]:
    """Step -> fraction of training of the complete snapshots (weights and marker both written); a marker that is
    not one is reported in one line and its snapshot skipped."""
    found = {}
    for marker in Path(ckpt_dir).glob("snapshot-*.json") if Path(ckpt_dir).is_dir() else []:
        m = re.fullmatch(r"snapshot-([0-9]+)\.json", marker.name)
        if m and (ckpt_dir / f"snapshot-{m[1]}.safetensors").is_file():
            try:
                found[int(m[1])] = read_marker(marker, SnapshotMarker)["fraction"]
            except ValueError as e:
                warn(f"{e}; snapshot skipped")
    return dict(sorted(found.items()))


def save_best(ckpt_dir: Path, model: nn.Module, state: dict) -> None:
    """The weights of the best evaluation so far (``best.safetensors``), then its marker ``best.json`` with their
    SHA-256 (``state``: epoch, step, value and run id): a kill between the two leaves a marker that does not match
    the weights, which readers refuse."""
    ckpt_dir.mkdir(exist_ok=True)
    weights = st_save(_weights(model))
    atomic_write_bytes(ckpt_dir / "best.safetensors", weights)
    marker = {**state, "sha256": {"weights": _sha256(weights)}}
    BestMarker.model_validate(marker)
    write_json(ckpt_dir / "best.json", marker)


_MARKER = re.compile(r"step-([0-9]+)\.json")


def complete_steps(ckpt_dir: Path) -> list[int]:
    if not ckpt_dir.is_dir():
        return []
    steps = []
    for marker in ckpt_dir.glob("step-*.json"):
        if (m := _MARKER.fullmatch(marker.name)) and (ckpt_dir / f"step-{m[1]}.safetensors").is_file():
            steps.append(int(m[1]))  # other names (a user's "step-46 (copy).json") are not checkpoints
    return sorted(steps)


def resumable_steps(ckpt_dir: Path) -> list[int]:
    """Steps of the complete checkpoints that kept their optimizer state (a run can resume from these)."""
    return [s for s in complete_steps(ckpt_dir) if (ckpt_dir / f"step-{s}.optim.pt").is_file()]


def load_weights(path: Path, model: nn.Module) -> None:
    """Load a weights file into ``model``; ValueError naming the file if it is unreadable or does not match."""
    try:
        tensors = st_load(Path(path).read_bytes())
    except Exception as e:  # noqa: BLE001 - truncated or not safetensors at all
        raise ValueError(f"{path}: not a readable weights file ({type(e).__name__})") from None
    _load_tensors(tensors, model, path)


def _load_tensors(tensors: dict[str, torch.Tensor], model: nn.Module, path: Path) -> None:
    """Check names and shapes against the model before touching it, so a mismatch leaves the model as it was."""
    own = model.state_dict()
    tied = {"head.weight"} if getattr(getattr(model, "cfg", None), "tied_head", False) else set()
    missing, unexpected = set(own) - set(tensors) - tied, set(tensors) - set(own)
    wrong = [k for k in set(own) & set(tensors) if own[k].shape != tensors[k].shape]
    if missing or unexpected or wrong:
        raise ValueError(f"{path}: weights do not match the model (missing {sorted(missing)[:3]}, unexpected "
                         f"{sorted(unexpected)[:3]}, other shapes {sorted(wrong)[:3]})")
    model.load_state_dict(tensors, strict=False)


def _check_optimizer_state(state: dict, optimizer: torch.optim.Optimizer, path: Path) -> None:
    """The saved AdamW state must be this optimizer's: the same groups, and moments shaped like the parameters."""
    params = [p for g in optimizer.param_groups for p in g["params"]]
    try:
        sizes = [len(g["params"]) for g in state["param_groups"]]
        ok = sizes == [len(g["params"]) for g in optimizer.param_groups] and all(
            isinstance(v, torch.Tensor) and (k == "step" or v.shape == params[i].shape)
            for i, moments in state["state"].items() for k, v in moments.items())
    except (KeyError, TypeError, IndexError, AttributeError):
        ok = False
    if not ok:
        raise ValueError(f"{path}: optimizer state of another model")


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def verified(ckpt_dir: Path, step: int, bounds: dict[str, int] | None = None) -> tuple[dict, bytes, bytes]:
    """(marker, weight bytes, optimizer bytes) of a checkpoint whose files match the digests of its marker, each
    file checked against its bound in ``bounds`` (by kind: ``weights``, ``optim``) before it is read; ValueError
    naming the damaged file otherwise."""
    marker_path = ckpt_dir / f"step-{step}.json"
    marker = read_marker(marker_path)
    files = {"weights": ckpt_dir / f"step-{step}.safetensors", "optim": ckpt_dir / f"step-{step}.optim.pt"}
    data = {}
    for kind, path in files.items():
        try:
            limit = (bounds or {}).get(kind)
            if limit is not None and (size := path.stat().st_size) > limit:
                raise ValueError(f"{path}: {size / 2**20:.1f} MB, more than this model's {kind} can take "
                                 f"({limit / 2**20:.1f} MB); not read")
            data[kind] = path.read_bytes()
        except OSError:
            raise ValueError(f"{path}: missing") from None
        expected = marker.get("sha256", {}).get(kind)
        if expected is not None and _sha256(data[kind]) != expected:
            raise ValueError(f"{path}: damaged (its SHA-256 differs from the one recorded when it was written)")
    return marker, data["weights"], data["optim"]


def file_bounds(model: nn.Module, optimizer: torch.optim.Optimizer) -> dict[str, int]:
    """The most bytes a checkpoint's files of this model can hold: its weights with a header of safetensors' largest
    size; the optimizer state with four tensors per parameter (AdamW's moments, and more) and a margin for the
    pickle around them. A file over these is not this model's (a huge sparse file): refused by its size alone."""
    weights = sum(t.numel() * t.element_size() for t in model.state_dict().values())
    params = sum(p.numel() * p.element_size() for g in optimizer.param_groups for p in g["params"])
    return {"weights": weights + MAX_HEADER_BYTES + 8, "optim": 4 * params + 64 * 2**20}


def load_latest(ckpt_dir: Path, model: nn.Module, optimizer: torch.optim.Optimizer,
                warn: Callable[[str], None] = print, max_step: int | None = None,
                run_id: str | None = None) -> dict | None:
    """Restore the newest checkpoint of run ``run_id`` that loads cleanly, with optimizer state (at or before
    ``max_step``, if given). Each one on the way that does not (damaged files, another run's or another model's
    weights or optimizer state, a marker missing its fields) is reported through ``warn`` in one line and
    skipped. None when there is none (the run starts from the beginning)."""
    bounds = file_bounds(model, optimizer)
    for step in reversed(resumable_steps(ckpt_dir)):
        if max_step is not None and step > max_step:
            continue
        try:
            marker, weights, optim = verified(ckpt_dir, step, bounds)
            check_marker(marker, step, run_id, ckpt_dir / f"step-{step}.json")
            with warnings.catch_warnings():  # torch's notes on a foreign pickle: it is refused below, in one line
                warnings.simplefilter("ignore", UserWarning)
                optim_state = torch.load(io.BytesIO(optim), weights_only=True, map_location="cpu")
            _check_optimizer_state(optim_state, optimizer, ckpt_dir / f"step-{step}.optim.pt")
            _load_tensors(st_load(weights), model, ckpt_dir / f"step-{step}.safetensors")
            optimizer.load_state_dict(optim_state)
        except pickle.UnpicklingError:  # torch's message is six lines advising weights_only=False: not here
            warn(f"{ckpt_dir / f'step-{step}.optim.pt'}: refused, it holds objects other than tensors (loading "
                 "them could run code); falling back to the previous checkpoint")
            continue
        except Exception as e:  # noqa: BLE001 - any damage means: fall back to the previous checkpoint
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            warn(f"{first if isinstance(e, ValueError) else ckpt_dir / f'step-{step}: unreadable ({first})'}; "
                 "falling back to the previous checkpoint")
            continue
        return marker
    return None


def checkpoint_at(run_dir: Path, fraction: float) -> tuple[int, Path]:
    """(epoch, weights file) of a run's saved checkpoint nearest to ``fraction`` of its training; a snapshot saved
    at exactly that fraction wins."""
    ckpt = Path(run_dir) / "checkpoints"
    marks = []
    for s in complete_steps(ckpt):
        try:
            marks.append(read_marker(ckpt / f"step-{s}.json"))
        except ValueError as e:
            warn(f"{e}; checkpoint skipped")
    if not marks:
        raise ValueError(f"{ckpt}: no complete checkpoint")
    for step, at in snapshot_steps(ckpt).items():
        if abs(at - fraction) < 1e-9:
            return read_marker(ckpt / f"snapshot-{step}.json", SnapshotMarker)["epoch"], \
                ckpt / f"snapshot-{step}.safetensors"
    total = max(m["epoch"] for m in marks)
    best = min(marks, key=lambda m: abs(m["epoch"] - fraction * total))
    return best["epoch"], ckpt / f"step-{best['step']}.safetensors"
