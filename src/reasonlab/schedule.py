"""Learning rate per batch: linear warm-up from base to peak, then cosine from peak to the floor (spec §4).

A law of the training config, read by the trainer and by whatever places runs on the Σlr clock (the anchor demo and
trajectory figures), so it sits just above ``config`` rather than inside ``train``.
"""

from __future__ import annotations

import math

from reasonlab.config import TrainConfig


def lr_at(step: int, cfg: TrainConfig, steps_per_epoch: int) -> float:
    """The learning rate of optimizer step ``step`` (0-based): warm-up, ``cosine_lag_steps`` at the peak, cosine."""
    base, peak = cfg.base_lr, cfg.base_lr * cfg.lr_multiplier
    floor = cfg.floor_lr if cfg.floor_lr is not None else base
    warm = cfg.warmup_epochs * steps_per_epoch
    cos_epochs = cfg.cosine_epochs if cfg.cosine_epochs is not None else cfg.epochs - cfg.warmup_epochs
    span = max(cos_epochs * steps_per_epoch, 1)
    if step < warm:
        return base + (peak - base) * step / warm
    t = min(max(step - warm - cfg.cosine_lag_steps, 0), span) / span
    return floor + (peak - floor) * 0.5 * (1 + math.cos(math.pi * t))


def lr_sums(cfg: TrainConfig, steps_per_epoch: int, steps: int) -> list[float]:
    """Σlr after each number of steps 0..``steps``: the integrated learning rate, the clock on which escapes from
    a small-init plateau are compared across batch sizes and schedules."""
    sums = [0.0]
    for step in range(steps):
        sums.append(sums[-1] + lr_at(step, cfg, steps_per_epoch))
    return sums
