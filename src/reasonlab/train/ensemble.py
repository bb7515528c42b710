"""Stacked ensembles: runs of one shape that differ only in seed, γ, learning rate, weight decay or clipping train
as one model with a leading member axis — one forward and one backward for all of them, of the single run's own
loss (``training_loss`` under vmap), then each member's own optimizer update (``Trainer.update``).

Each member keeps everything that makes it its own run: its data and data order (its trainer's ``batch_order``,
the same ``epoch_batches``), its init, its schedule, clipping and weight decay, its model and AdamW state, its
evaluations, checkpoints and run directory. So what lands in the store is the same as when the runs train one by
one (to float tolerance: stacked attention takes PyTorch's math kernel, and batched sums are taken in a different
order). Used by the sweep executors where it is faster (``ensemble`` in docs/performance.md).
"""

from __future__ import annotations

import hashlib
import json
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Literal

import torch
from torch import Tensor
from torch.func import functional_call, vmap
from torch.nn.attention import SDPBackend, sdpa_kernel

from reasonlab.allocator import keep_freed_memory
from reasonlab.checkpoint import resumable_steps
from reasonlab.config import RunConfig, fields_with, nested_fields
from reasonlab.numerics import flush_denormals
from reasonlab.store import run_lock, run_paths
from reasonlab.tasks.base import scored_positions
from reasonlab.train.loop import Trainer
from reasonlab.train.progress import Progress
from reasonlab.train.run import complete, finished_summary, run_directory
from reasonlab.train.step import epoch_batches, training_loss

# Fields a member may set on its own (role ``member``); everything else must match to share one stacked step.
MEMBER_FIELDS = nested_fields(fields_with("member"))


def stack_key(cfg: RunConfig) -> str:
    """Equal for runs that can train stacked."""
    blob = json.dumps(cfg.model_dump(mode="json", exclude=MEMBER_FIELDS), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


def group_stackable(cfgs: list[RunConfig], size: int) -> list[list[RunConfig]]:
    """The configs in stackable groups of at most ``size`` members, in first-seen order (size 1: one per run); a
    run that saves snapshots mid-epoch trains alone."""
    groups: dict[str, list[list[RunConfig]]] = {}
    order: list[list[RunConfig]] = []
    for cfg in cfgs:
        # snapshots are taken inside a single run's epoch: such runs train alone
        if cfg.train.snapshot_fractions or cfg.train.snapshot_steps:
            order.append([cfg])
            continue
        chunks = groups.setdefault(stack_key(cfg), [])
        if not chunks or len(chunks[-1]) >= max(size, 1):
            chunks.append([])
            order.append(chunks[-1])
        chunks[-1].append(cfg)
    return order


class Stack:
    """Members trained as one model: their parameters stacked on a leading axis for one vmapped forward of the
    trainer's own loss and one backward; then each member's own optimizer update (``Trainer.update``) steps its
    own parameters. So the members' models and AdamW states are always their own and current, as checkpoints
    and evaluations read them."""

    def __init__(self, trainers: list[Trainer]):
        self.trainers = trainers
        first = trainers[0]
        self.template = first.model
        self.buffers = dict(first.model.named_buffers())
        members = [dict(t.model.named_parameters()) for t in trainers]
        self.params = {n: [m[n] for m in members] for n in members[0]}  # name -> each member's parameter
        self.x = torch.stack([t.x for t in trainers])
        self.y = torch.stack([t.y for t in trainers])
        self.losses = vmap(self._member_loss, in_dims=(0, 0, 0, None))

    def _member_loss(self, params: dict[str, Tensor], x: Tensor, y: Tensor,
                     columns: Tensor | Literal["all"] | None) -> Tensor:
        """One member's ``training_loss``, with ``params`` in the shared template module."""
        def model(*args: Tensor | str) -> Tensor:
            return functional_call(self.template, (params, self.buffers), args)

        return training_loss(model, x, y, columns, self.trainers[0].cfg.train.loss_mean)

    def train_step(self, x: Tensor, y: Tensor) -> Tensor:
        """One optimizer step of every member on its own batch (leading axis M of ``x``, ``y``), each at the
        learning rate already set in its optimizer; returns the members' detached losses (M,)."""
        stacked = {n: torch.stack(ps) for n, ps in self.params.items()}
        columns = scored_positions(y) if y.dim() == 3 else None  # (M, B, T): the positions any member scores
        with sdpa_kernel(SDPBackend.MATH), self.trainers[0].autocast:  # the fused CPU kernel has no batching rule
            losses = self.losses(stacked, x, y, columns)
        for t in self.trainers:
            t.opt.zero_grad(set_to_none=True)
        losses.sum().backward()  # the members' losses share no parameter: each gets its own gradients
        for t in self.trainers:
            t.update()
        return losses.detach()

    def train_epoch(self, epoch: int, step: int) -> tuple[int, list[float]]:
        trainers, first = self.trainers, self.trainers[0]
        per_epoch = first.steps_per_epoch
        per_step = torch.zeros(per_epoch, len(trainers), device=self.x.device)  # checked once, at the end
        done = torch.stack([t.resumed_losses(epoch, step) for t in trainers], 1)  # resumed inside the epoch
        per_step[: len(done)] = done
        orders = torch.stack([t.batch_order(epoch) for t in trainers])
        batches = epoch_batches(self.x, self.y, orders, first.cfg.train.batch_size, len(done), per_epoch,
                                first.data.right_padded)
        for b, (x, y) in enumerate(batches, start=len(done)):
            self.between_steps(epoch, step, per_step[:b])
            for t in trainers:
                t.set_lr(step)
            per_step[b] = self.train_step(x, y)
            step += 1
            if b == len(done):
                for t in trainers:
                    t.touched = True
        self.between_steps(epoch, step, per_step)  # before the members' evaluations
        for i, t in enumerate(trainers):  # a member's NaN never reaches the others: the update is per member
            t.check_finite(per_step[:, i], epoch * per_epoch)
        return step, per_step.mean(0).tolist()

    def between_steps(self, epoch: int, step: int, per_step: Tensor) -> None:
        """What the members' shared ``Pace`` says is due, done for every member still training; a stop raises
        ``Interrupted`` once all are saved."""
        due = self.trainers[0].pace.due()
        if due is None:
            return
        for i, t in enumerate(self.trainers):
            if t.diverged is None:  # a diverged member is done: its last checkpoint stays the last
                t.act(due, epoch, step, per_step[:, i])
        if due == "stop":
            raise self.trainers[0].interrupted(step)


def _same_shape(trainers: list[Trainer]) -> bool:
    """Stackable in fact: same data and parameter shapes (a text task's vocabulary depends on its seed) and the
    same point of training (members resumed from different checkpoints train one by one)."""
    def shapes(t: Trainer) -> tuple:
        return (t.x.shape, t.y.shape, t.epoch, t.step, [p.shape for p in t.model.parameters()])

    per_step = any(t.data.batch_fn is not None for t in trainers)  # batches drawn per step train one by one
    return not per_step and all(shapes(t) == shapes(trainers[0]) for t in trainers)


def train_ensemble(cfgs: list[RunConfig], root: Path) -> list[tuple[Path, dict]]:
    """Train (or resume, or skip if finished) stackable runs together; each lands in its own run directory."""
    root = Path(root)
    results: dict[str, tuple[Path, dict]] = {}
    todo = []
    for cfg in cfgs:
        done = finished_summary(root, cfg)
        if done is not None:
            results[cfg.run_id()] = done
        else:
            todo.append(cfg)
    if todo and len({stack_key(c) for c in todo}) > 1:
        raise ValueError("train_ensemble: the runs differ in more than seed, init, lr, weight decay or clipping")
    trainers = {c.run_id(): Trainer(c, run_paths(root, c.run_id())[1], progress=False, log=lambda _: None)
                for c in todo}
    with ExitStack() as stack:
        stack.enter_context(flush_denormals())
        stack.enter_context(keep_freed_memory())
        for run_id in sorted(trainers):  # one order for every process: no lock cycles
            stack.enter_context(run_lock(root, run_id))
        live = []
        for cfg in todo:
            done = finished_summary(root, cfg)  # another process may have finished it while we waited
            if done is not None:
                results[cfg.run_id()] = done
                continue
            stack.enter_context(run_directory(trainers[cfg.run_id()]))
            live.append(trainers[cfg.run_id()])
        common = _common_step(live)
        for t in live:
            t.begin(max_step=common)
        if len(live) > 1 and _same_shape(live):
            _fit_stacked(live)
        for t in live:
            if t.epoch < t.cfg.train.epochs and t.diverged is None:  # not stacked (resumed apart): one by one
                t.fit()
            results[t.cfg.run_id()] = complete(t)
    return [results[c.run_id()] for c in cfgs]


def _common_step(trainers: list[Trainer]) -> int | None:
    """The newest checkpoint step every member can resume from (0: the beginning); None for a lone run.

    A kill between the members' checkpoints of one epoch leaves them an epoch apart; members ahead go back to the
    common one, so that all train stacked again and end as if never interrupted (apart, each would train alone and
    differ from the stacked run in float rounding). A member whose checkpoint there proves damaged falls back
    further and the members then train one by one."""
    if len(trainers) < 2:
        return None
    common = set.intersection(*(set(resumable_steps(t.run_dir / "checkpoints")) for t in trainers))
    return max(common, default=0)


def _fit_stacked(trainers: list[Trainer]) -> None:
    stacked, silent = Stack(trainers), Progress.silent()
    epoch, step = trainers[0].epoch, trainers[0].step
    pace = trainers[0].pace  # one clock for the stack
    pace.start(step)
    for member in trainers:
        member.pace = pace
    while epoch < trainers[0].cfg.train.epochs and any(t.diverged is None for t in trainers):
        started = time.perf_counter()
        for member in trainers:
            member.epoch_started = started
        live = [t.diverged is None for t in trainers]  # a diverged member trains on, stacked, but is done
        step, losses = stacked.train_epoch(epoch, step)
        epoch += 1
        trained = time.perf_counter() - started
        for t, loss, alive in zip(trainers, losses, live, strict=True):
            if alive:
                t.epoch, t.step = epoch, step
                t.times["steps"] += trained  # each member's, like its wall time: the stack trained them together
                t.end_epoch(loss, started, silent)
