"""A checkpoint's files checked: its markers' schemas, the shape of a safetensors file, a marker bound to its run
and its weights.

Layer: store (checkpoints are files of the run directory; ``reasonlab.checkpoint`` writes and loads them).

Every marker (``step-N.json``, ``snapshot-N.json``, ``best.json``) is read as its writer wrote it (``read_marker``),
names its run and records the SHA-256 of its files, so a reader refuses weights that are another run's or not the
ones the marker was written for (``bound_marker``); what a pack or a restore carries is checked whole, without a
file being read whole (``check_checkpoint``, ``check_best``, ``check_safetensors``), and its optimizer state loaded
as a resume loads it, executing nothing (``check_optimizer``).
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from reasonlab.errors import StoreError
from reasonlab.files import read_json
from reasonlab.staging import file_sha256, open_below

MAX_MARKER_BYTES = 2**20  # a marker is a few hundred bytes
MAX_HEADER_BYTES = 100 * 2**20  # safetensors' own bound on a header


class SnapshotMarker(BaseModel):
    """A snapshot's ``snapshot-N.json`` marker, as ``save_snapshot`` writes it (and checks it before writing)."""

    model_config = ConfigDict(strict=True, extra="allow")
    step: int
    epoch: int
    run_id: str | None = None  # markers written before run ids were recorded have none
    sha256: dict[str, str] = {}
    fraction: float


class Marker(SnapshotMarker):
    """A checkpoint's ``step-N.json`` marker: a snapshot's fields but the fraction, and the wall time so far."""

    fraction: float | None = None
    wall_time_s: float


class BestMarker(BaseModel):
    """``best.json``, as ``save_best`` writes it: where the early-stopping pick fell, the value it was picked by,
    its run and the SHA-256 of its weights (markers written before those two were recorded have neither)."""

    model_config = ConfigDict(strict=True, extra="allow")
    step: int = Field(ge=0)
    epoch: int = Field(ge=0)
    value: float
    run_id: str | None = None
    sha256: dict[str, str] = {}


def read_marker(path: Path, model: type[BaseModel] = Marker) -> dict:
    """A marker as its writer wrote it, or ValueError naming the file and what is wrong."""
    try:
        marker = read_json(path, "checkpoint marker", MAX_MARKER_BYTES)
        model.model_validate(marker)
        return marker
    except StoreError as e:
        raise ValueError(str(e)) from None
    except ValidationError as e:
        first = e.errors()[0]
        raise ValueError(f"{path}: not a checkpoint marker as reasonlab writes it ("
                         f"{'.'.join(map(str, first['loc'])) or 'the file'}: {first['msg']})") from None


_DTYPE_BYTES = {"BOOL": 1, "U8": 1, "I8": 1, "F8_E5M2": 1, "F8_E4M3": 1, "I16": 2, "U16": 2, "F16": 2, "BF16": 2,
                "I32": 4, "U32": 4, "F32": 4, "I64": 8, "U64": 8, "F64": 8}


def check_safetensors(root: Path, relative: str) -> None:
    """``root/relative`` is a whole safetensors file, read without following a link and without reading the
    tensors: its header parses, and its tensors' byte ranges follow one another from the start of the data to the
    end of the file — none overlapping another or leaving a gap — each as long as its dtype and shape say (an
    empty, cut or padded file, or one whose ranges were edited to overlap, fails); StoreError naming it
    otherwise."""
    with os.fdopen(open_below(root, Path(relative)), "rb") as f:
        size = os.fstat(f.fileno()).st_size
        try:
            n = int.from_bytes(f.read(8), "little")
            if size < 8 or n > min(size - 8, MAX_HEADER_BYTES):
                raise ValueError("header length")
            header = json.loads(f.read(n))
            why = _tensor_ranges(header, size - 8 - n)
        except (ValueError, RecursionError, KeyError, TypeError, AttributeError):
            why = "empty, cut short or another format"
    if why:
        raise StoreError(f"{root / relative}: not a whole safetensors file ({why})")


def _tensor_ranges(header: dict, data_bytes: int) -> str | None:
    """What is wrong with a safetensors header whose data part holds ``data_bytes`` bytes, or None."""
    spans = []
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        dtype, shape, (begin, end) = entry["dtype"], entry["shape"], entry["data_offsets"]
        if dtype not in _DTYPE_BYTES or not all(type(v) is int and v >= 0 for v in (*shape, begin, end)):
            return f"tensor {str(name)[:60]!r}: an unknown dtype, or a shape or offset that is not a count"
        if end - begin != math.prod(shape) * _DTYPE_BYTES[dtype]:
            return f"tensor {str(name)[:60]!r}: its byte range does not hold its dtype and shape"
        spans.append((begin, end, name))
    at = 0
    for begin, end, name in sorted(spans):
        if begin != at:
            return f"tensor {str(name)[:60]!r}: its bytes {'overlap another' if begin < at else 'leave a gap'}"
        at = end
    return None if at == data_bytes else f"its tensors end at byte {at} of the data, not at its end ({data_bytes})"

def check_checkpoint(ckpt_dir: Path, step: int, run_id: str, limit: int | None = None) -> dict:
    """The marker of run ``run_id``'s checkpoint at ``step``, once its files are checked: each a regular file (no
    link followed), at most ``limit`` bytes, not empty, of the SHA-256 its marker records (read in chunks); the
    weights a whole safetensors file (its header read, not its tensors); the optimizer state one that loads, once
    its size and digest hold (``check_optimizer``). StoreError naming the file otherwise: what a pack or a restore
    carries is a checkpoint a run resumes from."""
    path = ckpt_dir / f"step-{step}.json"
    file_sha256(ckpt_dir, path.name, MAX_MARKER_BYTES)  # a regular file of a marker's size, not a link
    try:
        marker = read_marker(path)
        check_marker(marker, step, run_id, path)
    except ValueError as e:
        raise StoreError(str(e)) from None
    for kind, name in (("weights", f"step-{step}.safetensors"), ("optim", f"step-{step}.optim.pt")):
        expected = marker["sha256"].get(kind)
        if expected is None:
            raise StoreError(f"{path}: records no SHA-256 of the {kind} file; a checkpoint that cannot be checked")
        if not os.path.lexists(ckpt_dir / name):
            raise StoreError(f"{ckpt_dir / name}: missing; the checkpoint of step {step} is not whole")
        size, digest = file_sha256(ckpt_dir, name, limit)
        if size == 0:
            raise StoreError(f"{ckpt_dir / name}: empty; the checkpoint of step {step} is not whole")
        if digest != expected:
            raise StoreError(f"{ckpt_dir / name}: damaged (its SHA-256 differs from the one its marker records)")
    check_safetensors(ckpt_dir, f"step-{step}.safetensors")
    check_optimizer(ckpt_dir, f"step-{step}.optim.pt")
    return marker


def check_optimizer(root: Path, relative: str) -> None:
    """``root/relative`` loads as an optimizer's state (``state`` and ``param_groups``), read without following a
    link by ``torch.load(weights_only=True)``, which takes tensors and plain values only, so nothing in the file
    runs. A checksum in the marker says the file is the one written, not that it loads: one edited to match a
    damaged file is caught here, as a resume would meet it. StoreError naming the file otherwise."""
    import warnings

    import torch

    with os.fdopen(open_below(root, Path(relative)), "rb") as f:
        try:
            with warnings.catch_warnings():  # torch's notes on a foreign pickle: it is refused, in one line
                warnings.simplefilter("ignore", UserWarning)
                state = torch.load(f, weights_only=True, map_location="cpu")
            why = None if isinstance(state, dict) and isinstance(state.get("state"), dict) and isinstance(
                state.get("param_groups"), list) else "not an optimizer's state"
        except Exception as e:  # noqa: BLE001 - any failure to load: damaged, cut short, or objects beyond tensors
            why = f"{type(e).__name__}: damaged, cut short or holding objects other than tensors"
    if why:
        raise StoreError(f"{root / relative}: an optimizer state that does not load ({why}); not a checkpoint to "
                         "resume from (replace the file by the run's own)")


def check_best(ckpt_dir: Path, run_id: str, limit: int | None = None) -> None:
    """The early-stopping checkpoint of run ``run_id`` in ``ckpt_dir``, where there is one, checked as
    ``check_checkpoint`` checks a checkpoint: its marker bound to its weights (``bound_marker``), the weights a
    whole safetensors file, neither a link."""
    if os.path.lexists(ckpt_dir / "best.json"):
        bound_marker(ckpt_dir, "best", run_id, limit)
    if os.path.lexists(ckpt_dir / "best.safetensors"):
        check_safetensors(ckpt_dir, "best.safetensors")


_MARKER_MODELS: dict[str, type[BaseModel]] = {"step": Marker, "snapshot": SnapshotMarker, "best": BestMarker}


def bound_marker(ckpt_dir: Path, name: str, run_id: str, limit: int | None = None) -> dict:
    """The marker of checkpoint ``name`` (``step-N``, ``snapshot-N`` or ``best``) of run ``run_id``, once it is
    bound to its weights: a regular file (no link followed) as its writer writes it (of step N; ``best`` of a step
    and an epoch that are whole numbers from 0), naming this run, and recording the SHA-256 that
    ``<name>.safetensors`` has (read in chunks, at most ``limit`` bytes). StoreError naming the file otherwise. A
    marker written before run ids and checksums were recorded is taken on its shape."""
    path = ckpt_dir / f"{name}.json"
    if not os.path.lexists(path):
        raise StoreError(f"{path}: missing; the checkpoint {name} cannot be checked")
    file_sha256(ckpt_dir, path.name, MAX_MARKER_BYTES)  # a regular file of a marker's size, not a link
    kind, _, step = name.partition("-")
    try:
        marker = read_marker(path, _MARKER_MODELS[kind])
    except ValueError as e:
        raise StoreError(str(e)) from None
    if step and marker["step"] != int(step):
        raise StoreError(f"{path}: the marker of step {marker['step']}, not of step {step}")
    if marker.get("run_id", run_id) != run_id:
        raise StoreError(f"{path}: a checkpoint of run {marker['run_id']}, not of {run_id}")
    expected = marker.get("sha256", {}).get("weights")
    weights = f"{name}.safetensors"
    if not os.path.lexists(ckpt_dir / weights):
        raise StoreError(f"{ckpt_dir / weights}: missing; the checkpoint {name} is not whole")
    if expected is not None and file_sha256(ckpt_dir, weights, limit)[1] != expected:
        raise StoreError(f"{ckpt_dir / weights}: not the weights {path.name} was written for (its SHA-256 differs "
                         "from the one recorded there: damaged or replaced)")
    return marker


def check_marker(marker: dict, step: int, run_id: str | None, path: Path) -> None:
    """A marker names its step, epoch and wall time, and (written since run ids were recorded) its run."""
    if not (isinstance(marker, dict) and marker.get("step") == step and isinstance(marker.get("epoch"), int)
            and isinstance(marker.get("wall_time_s"), int | float)):
        raise ValueError(f"{path}: not a checkpoint marker of step {step} (step, epoch or wall time missing)")
    losses = marker.get("epoch_losses", [])
    if not (isinstance(losses, list) and all(isinstance(v, int | float | None) for v in losses)):
        raise ValueError(f"{path}: its epoch_losses are not a list of numbers")
    if run_id is not None and marker.get("run_id", run_id) != run_id:
        raise ValueError(f"{path}: a checkpoint of run {marker['run_id']}, not of {run_id}")
