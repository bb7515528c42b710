"""The one way analyses and studies load a trained run: its config, task data and model at one checkpoint.

Analyses never import the trainer: the run is rebuilt through ``reasonlab.build`` and its weights read through
``reasonlab.checkpoint``. Probe modules import ``Loaded`` and ``save`` from here (not from ``probes``, which
looks them up), so there is no circle.

Layer: analysis; imports config, build, checkpoint, store, tasks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from reasonlab.arguments import ascii_int
from reasonlab.build import build_model, build_task
from reasonlab.checkpoint import checkpoint_at, complete_steps, load_weights, snapshot_steps
from reasonlab.checkpoint_checks import BestMarker, bound_marker, read_marker
from reasonlab.config import ConfigError, RunConfig, resolve
from reasonlab.config.io import set_dotted
from reasonlab.errors import StoreError
from reasonlab.files import write_json, write_npz
from reasonlab.records import load_run
from reasonlab.tasks.base import TaskData


@dataclass
class Loaded:
    """A run's config, task data and model at one checkpoint, plus where its probe outputs go."""

    cfg: RunConfig
    model: torch.nn.Module
    data: TaskData  # the run's evaluation sets, rebuilt from its config
    out: Path
    checkpoint: str
    options: dict = field(default_factory=dict)
    task: Any = None  # the task's law (its functions and pair/task lists): the kind's Task object


def load_trained(run_dir: Path, checkpoint: str = "final", data: TaskData | None = None
                 ) -> tuple[RunConfig, torch.nn.Module, TaskData, str]:
    """The model (and task data, built unless given) of a finished run at ``final`` (last step), ``best``
    (early-stopping pick) or a saved step; weights whose marker names another run, or records another SHA-256,
    are refused in one line naming the file (``checkpoint_checks.bound_marker``)."""
    _, raw = load_run(run_dir)
    cfg = resolve(raw)
    ckpt = Path(run_dir) / "checkpoints"
    steps = complete_steps(ckpt)
    if checkpoint == "best":
        path, name = ckpt / "best.safetensors", "best"
    elif checkpoint == "final":
        if not steps:
            raise ConfigError(f"{ckpt}: no complete checkpoint")
        path, name = ckpt / f"step-{steps[-1]}.safetensors", "final"
    elif (step := ascii_int(checkpoint)) is not None and step in steps:
        path, name = ckpt / f"step-{step}.safetensors", f"step-{step}"
    elif checkpoint.startswith("snapshot-") and checkpoint[9:] in map(str, snapshot_steps(ckpt)):
        path, name = ckpt / f"{checkpoint}.safetensors", checkpoint
    else:
        snaps = [f"snapshot-{s}" for s in snapshot_steps(ckpt)]
        raise ConfigError(f"--checkpoint: {checkpoint!r} is not final, best, a saved step or a snapshot "
                          f"({', '.join([*map(str, steps), *snaps]) or 'none'})")
    if not path.is_file():
        raise ConfigError(f"{path}: missing; this run kept no such checkpoint")
    try:
        marker = bound_marker(ckpt, path.stem, cfg.run_id())
        if steps and marker["step"] > steps[-1]:  # a pick the run never reached: not this run's record
            raise StoreError(f"{ckpt / f'{path.stem}.json'}: step {marker['step']}, past the run's last checkpoint "
                             f"(step {steps[-1]})")
    except StoreError as e:
        raise StoreError(f"{e}; analyze another checkpoint (--checkpoint final, best or a saved step)") from None
    data = data if data is not None else build_task(cfg)
    model = build_model(cfg, data)
    try:
        load_weights(path, model)
    except ValueError as e:
        raise ConfigError(str(e)) from None
    return cfg, model.eval(), data, name


def checkpoint_step(run_dir: Path, name: str) -> int:
    """The training step of a checkpoint ``load_trained`` named (``final``, ``best``, ``step-N``, ``snapshot-N``),
    so that an analysis says which weights it read: ``best`` is wherever the early-stopping pick fell."""
    ckpt = Path(run_dir) / "checkpoints"
    if name == "final":
        return complete_steps(ckpt)[-1]
    if name != "best":
        return int(name.rsplit("-", 1)[1])
    try:
        return read_marker(ckpt / "best.json", BestMarker)["step"]
    except ValueError as e:
        raise ConfigError(f"{ckpt / 'best.json'}: damaged, so the best checkpoint's step is unknown ({e}); analyze "
                          "another checkpoint (--checkpoint final or a saved step)") from None


def task_data(run_dir: Path, eval_batches: int | None = None) -> TaskData:
    """A run's task data rebuilt from its config. ``eval_batches`` (kinds whose evaluation sets are drawn in
    batches, ``task.eval_batches``: modular) draws each evaluation set from that many batches instead of the run's
    own: at 64 tasks the modular cpu profile's 4 batches hold 4 distinct pair rows, so a last-shot accuracy rests on
    4 queries; the first batches are the run's own, the rest new."""
    raw = load_run(run_dir)[1]
    if eval_batches is not None:
        task = resolve(raw).task
        if "eval_batches" not in type(task).model_fields:
            raise ConfigError(f"--eval-batches: {run_dir} is a {task.kind} run, whose evaluation sets are not drawn "
                              "in batches (no task.eval_batches); drop --eval-batches")
        set_dotted(raw, "task.eval_batches", eval_batches)
    return build_task(resolve(raw))


def load_at_fraction(run_dir: Path, fraction: float, data: TaskData | None = None
                     ) -> tuple[int, torch.nn.Module]:
    """(epoch, model) of a finished run at its saved checkpoint nearest to ``fraction`` of its training (e.g. 0.05
    for early, 1.0 for the end), through ``load_trained``."""
    epoch, weights = checkpoint_at(run_dir, fraction)
    return epoch, load_trained(run_dir, weights.stem.removeprefix("step-"), data)[1]


def save(run: Loaded, name: str, numbers: dict, arrays: dict[str, np.ndarray]) -> dict:
    run.out.mkdir(parents=True, exist_ok=True)
    write_json(run.out / f"{name}.json", numbers)
    if arrays:
        write_npz(run.out / f"{name}.npz", arrays)
    return numbers
