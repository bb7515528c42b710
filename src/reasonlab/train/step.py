"""What one training step reads and does, apart from the trainer's bookkeeping: the order of an epoch's rows and
its batches, which parameters weight decay applies to, and the loss (with the final block computing only the
positions scored). The trainer, stacked ensembles (through vmap) and the benchmarks share these, so a step is
defined once."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Literal

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from reasonlab.config import TrainConfig
from reasonlab.tasks.base import IGNORE, scored_positions, trim_padding


def training_loss(model: Callable[..., Tensor], x: Tensor, y: Tensor,
                  columns: Tensor | Literal["all"] | None = None,
                  mean: Literal["targets", "nonzero"] = "targets") -> Tensor:
    """Last-token cross-entropy for (B,) targets; for (B, T) targets, every position not marked IGNORE. Positions
    no row of the batch has a target at are not computed (the model's final block skips them). ``model``: a module,
    or under vmap one member's functional call; there a member cannot pick its own positions (a data-dependent
    shape), so the caller passes ``columns``, those scored by any row of any member. ``mean``: over every target,
    or over the targets whose loss is not exactly 0 (``train.loss_mean``)."""
    if y.dim() == 1:
        logits = model(x)
    else:
        if columns is None:
            columns = scored_positions(y)
        if not isinstance(columns, str):
            y = y[:, columns]
        logits, y = model(x, columns).flatten(0, 1), y.flatten()
    if mean == "targets":
        return F.cross_entropy(logits, y, ignore_index=IGNORE)
    per_target = F.cross_entropy(logits, y, ignore_index=IGNORE, reduction="none")
    return per_target.sum() / (per_target > 0).sum()


BUCKET_BATCHES = 32  # length bucketing: rows are sorted by length within windows of this many batches


def epoch_order(n: int, seed: int, batch_size: int, lengths: Tensor | None = None) -> Tensor:
    """The row order of one epoch: consecutive ``batch_size`` slices are its batches. A random permutation; with
    ``lengths`` (right-padded rows), rows are sorted by length within windows of ``BUCKET_BATCHES`` batches and
    the full batches shuffled, so a batch holds rows of similar length and trimming its padding saves compute
    (the rows left over after the last full batch stay random and last)."""
    gen = torch.Generator().manual_seed(seed)
    perm = torch.randperm(n, generator=gen)
    if lengths is None:
        return perm
    window = batch_size * BUCKET_BATCHES
    chunks = [c[lengths[c].argsort(stable=True)] for c in perm.split(window)]
    rows = torch.cat(chunks)
    full = n // batch_size * batch_size
    batches = rows[:full].view(-1, batch_size)
    return torch.cat([batches[torch.randperm(len(batches), generator=gen)].flatten(), rows[full:]])


def epoch_batches(x: Tensor, y: Tensor, order: Tensor, batch_size: int, first: int, stop: int,
                  trim: bool) -> Iterator[tuple[Tensor, Tensor]]:
    """Batches ``first`` to ``stop`` (exclusive) of an epoch: consecutive ``batch_size`` slices of ``order`` (an
    ``epoch_order``) taken from the rows of ``x`` and ``y``, right padding trimmed if ``trim``. With a leading
    member axis on all three (a stacked ensemble), each member's batch is its own rows in its own order, as when
    it trains alone, and the padding is trimmed to the longest batch of any member."""
    members = (torch.arange(len(order), device=order.device)[:, None],) if order.dim() == 2 else ()
    for b in range(first, stop):
        rows = (*members, order[..., b * batch_size : (b + 1) * batch_size])
        yield trim_padding(x[rows], y[rows]) if trim else (x[rows], y[rows])


def decays(p: Tensor, cfg: TrainConfig) -> bool:
    """Whether weight decay applies to ``p``: every parameter, or only matrices (2+ dimensions, so not
    LayerNorm weights or biases), as ``train.weight_decay_on`` says."""
    return cfg.weight_decay_on == "all" or p.dim() >= 2


def decay_groups(model: nn.Module, cfg: TrainConfig) -> list[dict]:
    params = list(model.parameters())
    groups = [{"params": [p for p in params if decays(p, cfg)]},
              {"params": [p for p in params if not decays(p, cfg)], "weight_decay": 0.0}]
    return [g for g in groups if g["params"]]
