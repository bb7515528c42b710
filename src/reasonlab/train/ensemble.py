"""Stacked ensembles: runs of one shape that differ only in seed, γ, learning rate, weight decay or clipping train
as one model with a leading member axis — one forward, one backward and one optimizer update for all of them.

Each member keeps everything that makes it its own run: its data and data order (from its seed), its init, its
schedule, clipping and weight decay, its evaluations, checkpoints and run directory. Between epochs the stacked
weights and AdamW moments are written back into each member's ordinary model and optimizer, so what lands in the
store is the same as when the runs train one by one (to float tolerance: stacked attention takes PyTorch's math
kernel, and sums are taken in a different order). Used by the sweep executors where it is faster (``ensemble``
in docs/performance.md).
"""

from __future__ import annotations

import hashlib
import json
import time
from contextlib import ExitStack
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import Tensor
from torch.func import functional_call, vmap
from torch.nn.attention import SDPBackend, sdpa_kernel

from reasonlab.checkpoint import resumable_steps
from reasonlab.config import RunConfig, fields_with, nested_fields
from reasonlab.numerics import flush_denormals
from reasonlab.schedule import lr_at
from reasonlab.seeds import subseed
from reasonlab.store import run_lock, run_paths
from reasonlab.tasks.base import IGNORE, trim_padding
from reasonlab.train.interrupt import Pace
from reasonlab.train.loop import Trainer, finished_summary, run_directory
from reasonlab.train.progress import Progress
from reasonlab.train.step import decays, epoch_order

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


@torch.no_grad()
def member_adamw_step(params: list[Tensor], grads: list[Tensor], moments: list[list[Tensor]], t: int, lrs: Tensor,
                      wd: Tensor, clip: Tensor, betas: tuple[float, float], eps: float, decay: list[bool]) -> None:
    """One AdamW step of M members at once (leading axis M of every tensor, in place): per-member gradient-norm
    clipping (``clip``: inf for none), then AdamW as torch.optim.AdamW's single-tensor path computes it, with each
    member's own learning rate and weight decay. ``t``: the step count after this step. A property test holds it
    to torch's own clip_grad_norm_ and AdamW member by member (tests/test_ensemble.py)."""
    norms = torch.stack([g.flatten(1).norm(dim=1) for g in grads]).norm(dim=0)
    coef = (clip / (norms + 1e-6)).clamp(max=1.0)
    beta1, beta2 = betas
    bc1, bc2_sqrt = 1 - beta1**t, (1 - beta2**t) ** 0.5
    for p, g, (m, v), d in zip(params, grads, moments, decay, strict=True):
        shape = (len(lrs),) + (1,) * (p.dim() - 1)
        g.mul_(coef.view(shape))
        if d:
            p.mul_((1 - lrs * wd).view(shape))
        m.lerp_(g, 1 - beta1)
        v.mul_(beta2).addcmul_(g, g, value=1 - beta2)
        p.sub_((lrs / bc1).view(shape) * m / (v.sqrt() / bc2_sqrt).add_(eps))


class Stack:
    """The members' parameters and AdamW moments stacked on a leading axis, and the step that trains them."""

    def __init__(self, trainers: list[Trainer]):
        self.trainers = trainers
        first = trainers[0]
        self.template = first.model
        self.names = [n for n, _ in first.model.named_parameters()]
        members = [dict(t.model.named_parameters()) for t in trainers]
        self.params = {n: torch.stack([m[n].detach() for m in members]).requires_grad_() for n in self.names}
        self.buffers = dict(first.model.named_buffers())
        self.moments = {n: [torch.zeros_like(p), torch.zeros_like(p)] for n, p in self.params.items()}
        states = [t.opt.state for t in trainers]
        self.t = 0
        if states[0]:  # resumed: every member's optimizer holds its moments
            self.t = int(next(iter(states[0].values()))["step"])
            for i, (m, state) in enumerate(zip(members, states, strict=True)):
                for n in self.names:
                    self.moments[n][0][i] = state[m[n]]["exp_avg"]
                    self.moments[n][1][i] = state[m[n]]["exp_avg_sq"]
        self.x = torch.stack([t.x for t in trainers])
        self.y = torch.stack([t.y for t in trainers])
        cfgs = [t.cfg.train for t in trainers]
        self.wd = torch.tensor([c.weight_decay for c in cfgs], device=self.x.device)
        self.clip = torch.tensor([c.grad_clip if c.grad_clip is not None else float("inf") for c in cfgs],
                                 device=self.x.device)
        self.forward = vmap(self._member_logits)

    def _member_logits(self, params: dict[str, Tensor], x: Tensor) -> Tensor:
        positions = "last" if self.y.dim() == 2 else "all"
        return functional_call(self.template, (params, self.buffers), (x, positions))

    def _losses(self, x: Tensor, y: Tensor) -> Tensor:
        """Each member's mean loss, as its own trainer would compute it."""
        with sdpa_kernel(SDPBackend.MATH), self.trainers[0].autocast:  # the fused CPU kernel has no batching rule
            logits = self.forward(self.params, x)
        M = len(self.trainers)
        if y.dim() == 2:  # (M, B): last-token targets
            return F.cross_entropy(logits.flatten(0, 1), y.flatten(), reduction="none").view(M, -1).mean(1)
        per_token = F.cross_entropy(logits.flatten(0, 2), y.flatten(), ignore_index=IGNORE, reduction="none")
        keep = (y != IGNORE).flatten(1)
        return (per_token.view(M, -1) * keep).sum(1) / keep.sum(1)

    def _update(self, grads: list[Tensor], lrs: Tensor) -> None:
        cfg = self.trainers[0].cfg.train
        self.t += 1
        member_adamw_step([self.params[n] for n in self.names], grads, [self.moments[n] for n in self.names],
                          self.t, lrs, self.wd, self.clip, cfg.betas, cfg.eps,
                          [decays(self.params[n], cfg, member_axis=True) for n in self.names])

    def train_epoch(self, epoch: int, step: int) -> tuple[int, list[float]]:
        trainers, first = self.trainers, self.trainers[0]
        n, batch, per_epoch = first.n_train, first.cfg.train.batch_size, first.steps_per_epoch
        perms = torch.stack([epoch_order(n, subseed(t.cfg.seed, f"shuffle:{epoch}"), batch, t.lengths)
                             for t in trainers]).to(self.x.device)
        rows = torch.arange(len(trainers), device=self.x.device)[:, None]
        per_step = torch.zeros(per_epoch, len(trainers), device=self.x.device)  # checked once, at the end
        done = torch.stack([t.resumed_losses(epoch, step) for t in trainers], 1)  # resumed inside the epoch
        per_step[: len(done)] = done
        for b in range(len(done), per_epoch):
            self.between_steps(epoch, step, per_step[:b])
            idx = perms[:, b * batch : (b + 1) * batch]
            lrs = torch.tensor([lr_at(step, t.cfg.train, per_epoch) for t in trainers], device=self.x.device)
            x, y = self.x[rows, idx], self.y[rows, idx]
            if self.trainers[0].data.right_padded:
                x, y = trim_padding(x, y)
            losses = self._losses(x, y)
            grads = list(torch.autograd.grad(losses.sum(), [self.params[n] for n in self.names]))
            self._update(grads, lrs)
            per_step[b] = losses.detach()
            step += 1
            if b == len(done):
                for t in trainers:
                    t.touched = True
        self.between_steps(epoch, step, per_step)  # before the members' evaluations
        for i, t in enumerate(trainers):  # a member's NaN never reaches the others: the update is per member
            t.check_finite(per_step[:, i], epoch * per_epoch)
        return step, per_step.mean(0).tolist()

    def between_steps(self, epoch: int, step: int, per_step: Tensor) -> None:
        """What the members' shared ``Pace`` says is due, done for every member still training (the weights
        written back first for a checkpoint); a stop raises ``Interrupted`` once all are saved."""
        due = self.trainers[0].pace.due()
        if due is None:
            return
        if due != "progress":
            self.write_back()
        for i, t in enumerate(self.trainers):
            if t.diverged is None:  # a diverged member is done: its last checkpoint stays the last
                t.act(due, epoch, step, per_step[:, i])
        if due == "stop":
            raise self.trainers[0].interrupted(step)

    @torch.no_grad()
    def write_back(self) -> None:
        """Copy each member's slice into its own model and AdamW state (what its checkpoint and evaluation read)."""
        for i, t in enumerate(self.trainers):
            for n, p in t.model.named_parameters():
                p.copy_(self.params[n][i])
                t.opt.state[p] = {"step": torch.tensor(float(self.t)), "exp_avg": self.moments[n][0][i].clone(),
                                  "exp_avg_sq": self.moments[n][1][i].clone()}


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
        for run_id in sorted(trainers):  # one order for every process: no lock cycles
            stack.enter_context(run_lock(root, run_id))
        live = []
        for cfg in todo:
            done = finished_summary(root, cfg)  # another process may have finished it while we waited
            if done is not None:
                results[cfg.run_id()] = done
                continue
            stack.enter_context(run_directory(cfg, trainers[cfg.run_id()]))
            live.append(trainers[cfg.run_id()])
        common = _common_step(live)
        for t in live:
            t.begin(max_step=common)
        if len(live) > 1 and _same_shape(live):
            _fit_stacked(live)
        for t in live:
            if t.epoch < t.cfg.train.epochs and t.diverged is None:  # not stacked (resumed apart): one by one
                t.fit()
            results[t.cfg.run_id()] = t.complete()
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
    cfg = trainers[0].cfg.train
    pace = Pace(cfg.checkpoint_minutes, step, cfg.epochs * trainers[0].steps_per_epoch)  # one clock for the stack
    for member in trainers:
        member.pace = pace
    while epoch < cfg.epochs and any(t.diverged is None for t in trainers):
        started = time.perf_counter()
        for member in trainers:
            member.epoch_started = started
        live = [t.diverged is None for t in trainers]  # a diverged member trains on, stacked, but is done
        step, losses = stacked.train_epoch(epoch, step)
        epoch += 1
        stacked.write_back()
        trained = time.perf_counter() - started
        for t, loss, alive in zip(trainers, losses, live, strict=True):
            if alive:
                t.epoch, t.step = epoch, step
                t.times["steps"] += trained  # each member's, like its wall time: the stack trained them together
                t.end_epoch(loss, started, silent)
