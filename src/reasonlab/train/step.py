"""What one training step reads and does, apart from the trainer's bookkeeping: the order of an epoch's rows,
which parameters weight decay applies to, and the loss (with the final block computing only the positions scored).
The trainer, stacked ensembles and the benchmarks share these, so a step is defined once."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from reasonlab.config import TrainConfig
from reasonlab.tasks.base import IGNORE, scored_positions


def training_loss(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Last-token cross-entropy for (B,) targets; for (B, T) targets, every position not marked IGNORE. Positions
    no row of the batch has a target at are not computed (the model's final block skips them)."""
    if y.dim() == 1:
        return F.cross_entropy(model(x), y)
    columns = scored_positions(y)
    if not isinstance(columns, str):
        y = y[:, columns]
    return F.cross_entropy(model(x, columns).flatten(0, 1), y.flatten(), ignore_index=IGNORE)


BUCKET_BATCHES = 32  # length bucketing: rows are sorted by length within windows of this many batches


def epoch_order(n: int, seed: int, batch_size: int, lengths: torch.Tensor | None = None) -> torch.Tensor:
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


def decays(p: torch.Tensor, cfg: TrainConfig, member_axis: bool = False) -> bool:
    """Whether weight decay applies to ``p``: every parameter, or only matrices (2+ dimensions, so not
    LayerNorm weights or biases), as ``train.weight_decay_on`` says."""
    return cfg.weight_decay_on == "all" or p.dim() - member_axis >= 2


def decay_groups(model: nn.Module, cfg: TrainConfig) -> list[dict]:
    params = list(model.parameters())
    groups = [{"params": [p for p in params if decays(p, cfg)]},
              {"params": [p for p in params if not decays(p, cfg)], "weight_decay": 0.0}]
    return [g for g in groups if g["params"]]
