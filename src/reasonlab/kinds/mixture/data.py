"""Reasoning and memory anchors in one training set (reasoning-bias spec §2).

A sequence holds a key z, a tuple of q anchors right after it, and noise. Reasoning tuples (all from
``rsn_anchors``) are labelled z + Σ anchors, a rule a model can infer for unseen tuples; memory tuples (all from one
memory group) are labelled by a table drawn once per key–tuple, which can only be memorized. ``masked_tuples`` of
reasoning anchors are never trained and measure whether the rule was learned. The Emb-MLP form drops noise and
positions: the input is exactly [z, a1, ..., aq].
"""

from __future__ import annotations

from itertools import product

import torch
from torch import Tensor

from reasonlab.config import ConfigError
from reasonlab.kinds.mixture.config import MemoryGroup, MixtureTaskConfig
from reasonlab.seeds import subseed
from reasonlab.tasks.base import EvalSet, TaskData

Tuple = tuple[int, ...]


class MixtureTask:
    def __init__(self, cfg: MixtureTaskConfig):
        self.cfg = cfg
        self.keys = torch.arange(cfg.key_min, cfg.key_max + 1)
        self.masked = {tuple(t) for t in cfg.masked_tuples}
        self.rsn_tuples: list[Tuple] = list(product(cfg.rsn_anchors, repeat=cfg.q))
        self.mem_tuples: list[tuple[int, Tuple]] = [
            (gi, t) for gi, g in enumerate(cfg.memory_groups) for t in product(g.anchors, repeat=cfg.q)]
        self.table = self._memory_table()

    # ---- labels --------------------------------------------------------------------------------------------
    def table_key(self, t: Tuple) -> Tuple:
        return tuple(sorted(t)) if self.cfg.memory_keying == "unordered" else t

    def _memory_table(self) -> dict[Tuple, Tensor]:
        """One label per (key, tuple), drawn once from ``table_seed`` in a fixed tuple order: every run with the same
        table seed memorizes the same table, whatever its own seed."""
        gen = torch.Generator().manual_seed(subseed(self.cfg.table_seed, "memory-table"))
        table: dict[Tuple, Tensor] = {}
        for gi, t in sorted(self.mem_tuples):
            key = self.table_key(t)
            if key not in table:
                table[key] = self._draw_labels(self.cfg.memory_groups[gi], t, gen)
        return table

    def _draw_labels(self, group: MemoryGroup, t: Tuple, gen: torch.Generator) -> Tensor:
        n = len(self.keys)
        if group.labels == "keys":
            return torch.randint(self.cfg.key_min, self.cfg.key_max + 1, (n,), generator=gen)
        if group.labels == "range":
            return torch.randint(group.lo, group.hi + 1, (n,), generator=gen)
        spread = abs(sum(t))  # near_key: uniform on z − Σa .. z + Σa
        return self.keys + torch.randint(-spread, spread + 1, (n,), generator=gen)

    def label_range(self, group: MemoryGroup, z: Tensor, t: Tuple) -> tuple[Tensor, Tensor]:
        """The range each key's memory label was drawn from (the Fig. 8 in-range rate reads it)."""
        if group.labels == "keys":
            lo, hi = self.cfg.key_min, self.cfg.key_max
        elif group.labels == "range":
            lo, hi = group.lo, group.hi
        else:
            return z - abs(sum(t)), z + abs(sum(t))
        return torch.full_like(z, lo), torch.full_like(z, hi)

    def reasoning_label(self, z: Tensor, t: Tuple) -> Tensor:
        return z + sum(t)

    def memory_label(self, z: Tensor, t: Tuple) -> Tensor:
        return self.table[self.table_key(t)][z - self.cfg.key_min]

    # ---- sampling ------------------------------------------------------------------------------------------
    def _keys(self, n: int, gen: torch.Generator) -> Tensor:
        """Keys for n sequences of one tuple: each key equally often (stratified), the remainder drawn without
        repeats, shuffled; or i.i.d. uniform."""
        k = len(self.keys)
        if not self.cfg.key_stratify:
            return self.keys[torch.randint(k, (n,), generator=gen)]
        idx = torch.cat([torch.arange(k).repeat(n // k), torch.randperm(k, generator=gen)[: n % k]])
        return self.keys[idx[torch.randperm(n, generator=gen)]]

    def sample(self, t: Tuple, n: int, gen: torch.Generator) -> tuple[Tensor, Tensor]:
        """n sequences of one tuple: (inputs, keys)."""
        cfg, q = self.cfg, len(t)
        keys = self._keys(n, gen)
        anchors = torch.tensor(t).expand(n, q)
        if cfg.emb_mlp_form:
            return torch.cat([keys[:, None], anchors], 1), keys
        seq = self.keys[torch.randint(len(self.keys), (n, cfg.seq_len), generator=gen)]
        pos = torch.randint(cfg.seq_len - q, (n,), generator=gen)
        rows = torch.arange(n)
        seq[rows, pos] = keys
        for i in range(q):
            seq[rows, pos + 1 + i] = anchors[:, i]
        return seq, keys

    def _counts(self, tuples: list[Tuple]) -> dict[Tuple, int]:
        """``n_samples`` split equally over all tuples, the remainder to the first tuples in lexicographic order."""
        ordered = sorted(tuples)
        base, extra = divmod(self.cfg.n_samples, len(ordered))
        if base == 0:
            raise ConfigError(f"task.n_samples: {self.cfg.n_samples} is fewer than the {len(ordered)} tuples; raise it")
        return {t: base + (i < extra) for i, t in enumerate(ordered)}

    def build(self, seed: int) -> TaskData:
        gen = torch.Generator().manual_seed(subseed(seed, "data"))
        counts = self._counts([t for _, t in self.mem_tuples] + self.rsn_tuples)
        parts: dict[str, tuple[list[Tensor], list[Tensor], list[tuple[Tensor, Tensor]]]] = {}
        multi = len(self.cfg.memory_groups) > 1
        for gi, t in self.mem_tuples:
            seq, keys = self.sample(t, counts[t], gen)
            xs, ys, ranges = parts.setdefault(f"memory/group-{gi + 1}" if multi else "memory", ([], [], []))
            xs.append(seq)
            ys.append(self.memory_label(keys, t))
            ranges.append(self.label_range(self.cfg.memory_groups[gi], keys, t))
        for t in self.rsn_tuples:
            seq, keys = self.sample(t, counts[t], gen)
            xs, ys, _ = parts.setdefault("reasoning/test" if t in self.masked else "reasoning/train", ([], [], []))
            xs.append(seq)
            ys.append(self.reasoning_label(keys, t))
        sets: dict[str, EvalSet] = {}
        for name, (xs, ys, ranges) in parts.items():
            x, y = torch.cat(xs), torch.cat(ys)
            perm = torch.randperm(len(x), generator=gen)  # a prefix of a set is a random subset of it
            bounds = tuple(torch.cat([r[i] for r in ranges])[perm] for i in (0, 1)) if ranges else None
            sets[name] = EvalSet(x[perm], {"designated": y[perm]}, label_range=bounds)
        train = [s for n, s in sets.items() if n != "reasoning/test"]
        if not train:
            raise ConfigError("task.masked_tuples: every tuple is masked; leave some data to train on")
        data = TaskData(self.cfg.vocab_size, self.cfg.length, torch.cat([s.inputs for s in train]),
                        torch.cat([s.targets["designated"] for s in train]), sets,
                        info={"set_sizes": {n: len(s) for n, s in sets.items()}, "tuples": len(counts)})
        self._check_vocab(data)
        return data

    def _check_vocab(self, data: TaskData) -> None:
        v = self.cfg.vocab_size
        top = max(self.cfg.key_max, *self.cfg.rsn_anchors, *(a for g in self.cfg.memory_groups for a in g.anchors))
        if top >= v:
            raise ConfigError(f"task.vocab_size: {v} is too small for tokens up to {top}; raise it")
        for name, es in data.eval_sets.items():
            y = es.targets["designated"]
            if int(y.min()) < 1 or int(y.max()) > v - 1:
                raise ConfigError(f"task.vocab_size: {name} labels span {int(y.min())}..{int(y.max())}, outside "
                                  f"1..{v - 1}; change the key range, anchors or vocab_size")
