"""The parity task's data: every bit string of ``n_bits`` bits, split by the seed into seen and held-out ones.

A sequence is the bits as tokens (1 = bit 0, 2 = bit 1) and an ``=`` token (3); the target at the last position is
the parity token (1 or 2). Answering a held-out string right needs the rule, not a memorized table.

Layer: tasks (by its file name).
"""

from __future__ import annotations

import itertools

import torch

from reasonlab.seeds import subseed
from reasonlab.tasks.base import EvalSet, TaskData

from .config import ParityTaskConfig

EQUALS = 3


class ParityTask:
    """``ParityTask(config).build(seed)``: the run's data; the split of strings is drawn from the seed."""

    def __init__(self, cfg: ParityTaskConfig):
        self.cfg = cfg

    def build(self, seed: int) -> TaskData:
        n = self.cfg.n_bits
        bits = torch.tensor(list(itertools.product([0, 1], repeat=n)))
        inputs = torch.cat([bits + 1, torch.full((len(bits), 1), EQUALS)], dim=1)
        targets = bits.sum(1) % 2 + 1
        order = torch.randperm(len(bits), generator=torch.Generator().manual_seed(subseed(seed, "split")))
        n_held = max(1, round(self.cfg.held_out * len(bits)))
        held, seen = order[:n_held], order[n_held:]
        reps = seen.repeat(self.cfg.repeats)
        return TaskData(vocab_size=4, seq_len=n + 1, train_inputs=inputs[reps], train_targets=targets[reps],
                        eval_sets={"seen": EvalSet(inputs[seen], {"designated": targets[seen]}),
                                   "held_out": EvalSet(inputs[held], {"designated": targets[held]})},
                        info={"n_seen_strings": len(seen), "n_held_out_strings": n_held})
