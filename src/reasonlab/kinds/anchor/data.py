"""The anchor-composition task (spec §2): a key, an adjacent anchor pair, noise, and one label at the end.

Every number comes from ``AnchorTaskConfig``; nothing here knows the paper's anchors 1–4. The same class also
gives the inferential-complexity variant (``complexity_k`` pairs with symmetric non-inferential targets).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product

import torch
from torch import Tensor

from reasonlab.config import ConfigError
from reasonlab.kinds.anchor.config import AnchorTaskConfig, Pair
from reasonlab.seeds import subseed
from reasonlab.tasks.base import EvalSet, TaskData


@dataclass(frozen=True)
class HeldOutTargets:
    """How a held-out pair is scored: its inferential target and, when defined, the symmetric one."""

    pair: Pair
    mirror: Pair
    symmetric: str  # "defined" | "undefined" (mirror held out) | "indistinguishable" (same as inferential)


def symmetric_offsets(eval_sets: dict[str, EvalSet]) -> dict[str, int]:
    """Per held-out set whose symmetric target lies a fixed distance from the inferential one (every shift-defined
    task), that distance: where the symmetric answer falls in the set's (prediction − inferential) histogram."""
    out = {}
    for name, es in eval_sets.items():
        if "symmetric" in es.targets:
            gaps = (es.targets["symmetric"] - es.targets["inferential"]).unique()
            if len(gaps) == 1:
                out[name] = int(gaps[0])
    return out


class AnchorTask:
    def __init__(self, cfg: AnchorTaskConfig):
        self.cfg = cfg
        self.pairs: list[Pair] = [Pair(*p) for p in product(cfg.anchors, repeat=2)]
        self.held_out: list[Pair] = [Pair(*p) for p in cfg.held_out_pairs]
        self.trained: list[Pair] = [p for p in self.pairs if p not in self.held_out]
        self.offsets: dict[Pair, int] = {}
        for pair, off in zip(cfg.complexity_pairs[: cfg.complexity_k], cfg.complexity_offsets, strict=False):
            self.offsets[tuple(pair)] = off
            self.offsets[(pair[1], pair[0])] = off
        for key, off in cfg.non_inferential.items():
            self.offsets[Pair.parse(key)] = off
        self._tables = self._single_tables()

    # ---- the functions -------------------------------------------------------------------------------------
    def _single_tables(self) -> dict[int, Tensor] | None:
        if self.cfg.single_maps is None:
            return None
        size = max(self.cfg.vocab_size, *(max(m) + 1 for m in self.cfg.single_maps.values()))
        tables = {}
        for a, mapping in self.cfg.single_maps.items():
            t = torch.full((size,), -1, dtype=torch.long)
            for x, y in mapping.items():
                t[x] = y
            tables[a] = t
        return tables

    def single(self, x: Tensor, anchor: int) -> Tensor:
        """g(x; a): the anchor's own map."""
        if self._tables is None:
            return x + self.cfg.shifts[anchor]
        table = self._tables[anchor]
        if (x < 0).any() or (x >= len(table)).any() or (table[x] < 0).any():
            raise ConfigError(f"task.single_maps: anchor {anchor} has no value for some input; extend its map")
        return table[x]

    def inferential(self, x: Tensor, pair: Pair) -> Tensor:
        """f(x; a1, a2) = g(g(x; a1); a2), a1 first in sequence order."""
        return self.single(self.single(x, pair[0]), pair[1])

    def designated(self, x: Tensor, pair: Pair) -> Tensor:
        """The label the data actually uses for a pair: inferential unless the pair is non-inferential."""
        off = self.offsets.get(pair)
        return x + off if off is not None else self.inferential(x, pair)

    def held_out_targets(self, pair: Pair) -> HeldOutTargets:
        mirror = Pair(pair[1], pair[0])
        if mirror in self.held_out:
            kind = "undefined"
        else:
            xs = torch.arange(self.cfg.item_min, self.cfg.item_max + 1)
            same = torch.equal(self.designated(xs, mirror), self.inferential(xs, pair))
            kind = "indistinguishable" if same else "defined"
        return HeldOutTargets(pair, mirror, kind)

    def target_of(self, seq: Tensor) -> int:
        """Label of one sequence, found by locating its anchor pair (used to check data against the spec)."""
        anchors = torch.tensor(self.cfg.anchors)
        is_anchor = torch.isin(seq, anchors)
        idx = int(torch.nonzero(is_anchor[:-1] & is_anchor[1:])[0])
        return int(self.designated(seq[idx - 1 : idx], (int(seq[idx]), int(seq[idx + 1])))[0])

    # ---- sampling ------------------------------------------------------------------------------------------
    def _key_table(self, test: bool) -> tuple[Tensor, Tensor]:
        """Admissible keys per key position (padded) and their counts, for train-key or test-key groups."""
        cfg, m = self.cfg, self.cfg.modulus()
        items = torch.arange(cfg.item_min, cfg.item_max + 1)
        rows = []
        for p in cfg.positions():
            if not cfg.split or m == 0:
                keys = items
            else:
                keys = items[(items % m == p % m) if test else (items % m != p % m)]
            if len(keys) == 0:
                side = "test" if test else "train"
                raise ConfigError(f"task.split_modulus: no {side} keys at key position {p}; change the modulus")
            rows.append(keys)
        counts = torch.tensor([len(r) for r in rows])
        table = torch.zeros(len(rows), int(counts.max()), dtype=torch.long)
        for i, r in enumerate(rows):
            table[i, : len(r)] = r
        return table, counts

    def sample(self, pair: Pair, n: int, test: bool, gen: torch.Generator) -> tuple[Tensor, Tensor, Tensor]:
        """n sequences of one ordered pair: (inputs, keys, key positions)."""
        cfg = self.cfg
        positions = torch.tensor(cfg.positions())
        table, counts = self._key_table(test)
        seq = torch.randint(cfg.item_min, cfg.item_max + 1, (n, cfg.seq_len), generator=gen)
        pi = torch.randint(len(positions), (n,), generator=gen)
        ki = (torch.rand(n, generator=gen) * counts[pi]).long()
        keys, pos = table[pi, ki], positions[pi]
        rows = torch.arange(n)
        seq[rows, pos] = keys
        seq[rows, pos + 1] = pair[0]
        seq[rows, pos + 2] = pair[1]
        return seq, keys, pos

    def build(self, seed: int) -> TaskData:
        cfg = self.cfg
        gen = torch.Generator().manual_seed(subseed(seed, "data"))
        train_x, train_y, eval_sets, counts = [], [], {}, {}
        for pair in self.pairs:
            for test, n in ((False, cfg.n_train_per_pair), (True, cfg.n_test_per_pair)):
                seq, keys, _ = self.sample(pair, n, test, gen)
                group = "test_keys" if test else "train_keys"
                counts[f"{pair.key}/{group}"] = n
                if pair in self.held_out:
                    eval_sets[pair.eval_set(group)] = self._held_out_set(pair, seq, keys)
                    continue
                y = self.designated(keys, pair)
                if test:
                    eval_sets[f"test/{pair.key}"] = EvalSet(seq, {"designated": y})
                else:
                    train_x.append(seq)
                    train_y.append(y)
                    eval_sets[f"train/{pair.key}"] = EvalSet(seq, {"designated": y})
        if not train_x:
            raise ConfigError("task.held_out_pairs: every pair is held out; leave at least one to train on")
        data = TaskData(cfg.vocab_size, cfg.seq_len, torch.cat(train_x), torch.cat(train_y), eval_sets,
                        info={"group_counts": counts, "split_modulus": cfg.modulus() if cfg.split else 0,
                              "symmetric_offsets": symmetric_offsets(eval_sets)})
        self._check_vocab(data)
        return data

    def _held_out_set(self, pair: Pair, seq: Tensor, keys: Tensor) -> EvalSet:
        spec = self.held_out_targets(pair)
        targets = {"inferential": self.inferential(keys, pair)}
        if spec.symmetric == "defined":
            targets["symmetric"] = self.designated(keys, spec.mirror)
        return EvalSet(seq, targets, reference="inferential", info={"symmetric": spec.symmetric})

    def _check_vocab(self, data: TaskData) -> None:
        v = self.cfg.vocab_size
        if self.cfg.item_max >= v or max(self.cfg.anchors) >= v:
            raise ConfigError(f"task.vocab_size: {v} is too small for items up to {self.cfg.item_max}; raise it")
        for name, es in data.eval_sets.items():
            for kind, t in es.targets.items():
                if int(t.min()) < 1 or int(t.max()) > v - 1:
                    raise ConfigError(
                        f"task.vocab_size: {name} {kind} targets span {int(t.min())}..{int(t.max())}, outside "
                        f"1..{v - 1}; change item range, shifts or vocab_size"
                    )
