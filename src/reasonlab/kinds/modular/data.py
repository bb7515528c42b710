"""In-context modular arithmetic (modular-icl spec §2): z = (a·x + b·y) mod p, learned from examples in context.

A task is (a, b) in Z_p²; a sequence is ``n_shots`` examples ``x y z`` of one task, one token per residue, and the
loss reads the z tokens only. Pre-training (i.d.) tasks come from the rectangular rule (every base task plus the
three other corners of an axis-aligned rectangle), at random, or both; o.o.d. tasks are the rest of the grid. One
split of the p² input pairs, shared by every task, gives the train pairs (a fraction α) and the test pairs. The
functions are the data law (tensors in, tensors out, every draw from an explicit generator); ``ModularTask`` puts
them together into a run's evaluation sets and per-step batch source.
"""

from __future__ import annotations

import json

import numpy as np
import torch
from torch import Tensor

from reasonlab.config import ConfigError
from reasonlab.kinds.modular.config import ModularTaskConfig
from reasonlab.seeds import subseed
from reasonlab.tasks.base import IGNORE, EvalSet, TaskData


def task_grid(p: int, allow_zero: bool) -> list[tuple[int, int]]:
    lo = 0 if allow_zero else 1
    return [(a, b) for a in range(lo, p) for b in range(lo, p)]


def _draw(options: list[int], gen: torch.Generator) -> int:
    return options[int(torch.randint(len(options), (1,), generator=gen))]


def rectangular_tasks(p: int, n_tasks: int, gen: torch.Generator, allow_zero: bool = True,
                      max_draws: int = 10_000) -> list[tuple[int, int]]:
    """``n_tasks`` = 4·n_base distinct tasks: n_base distinct bases (a, b) drawn from the grid, then for each base
    a' ∉ {a, b} and b' ∉ {a, b, a'}, adding the corners (a, b'), (a', b), (a', b'); when one of them is already in
    the set, all three are redrawn (at most ``max_draws`` times per base)."""
    if n_tasks % 4 or n_tasks <= 0:
        raise ConfigError(f"task.n_tasks: {n_tasks} is not a positive multiple of 4, which the rectangular rule needs")
    grid = task_grid(p, allow_zero)
    if n_tasks > len(grid):
        raise ConfigError(f"task.n_tasks: {n_tasks} exceeds the {len(grid)} tasks of the grid for p={p}")
    residues = [r for r in range(p) if allow_zero or r]
    bases = random_tasks(p, n_tasks // 4, gen, allow_zero)
    chosen: list[tuple[int, int]] = []  # base, then its three corners: rectangle i is chosen[4i : 4i + 4]
    taken = set(bases)
    for a, b in bases:
        for _ in range(max_draws):
            a2 = _draw([r for r in residues if r not in (a, b)], gen)
            b2 = _draw([r for r in residues if r not in (a, b, a2)], gen)
            corners = [(a, b2), (a2, b), (a2, b2)]
            if not taken.intersection(corners):
                chosen += [(a, b), *corners]
                taken.update(corners)
                break
        else:
            raise ConfigError(f"task.n_tasks: {n_tasks} rectangular tasks could not be drawn for p={p} after "
                              f"{max_draws} tries per base; lower n_tasks or use task_rule=random")
    return chosen


def random_tasks(p: int, n: int, gen: torch.Generator, allow_zero: bool = True,
                 exclude: set[tuple[int, int]] = frozenset()) -> list[tuple[int, int]]:
    """``n`` tasks uniformly without replacement from the grid, none of ``exclude``."""
    grid = [t for t in task_grid(p, allow_zero) if t not in exclude]
    if n > len(grid):
        raise ConfigError(f"task.n_tasks: {n} random tasks asked for, only {len(grid)} left in the grid for p={p}")
    return [grid[int(i)] for i in torch.randperm(len(grid), generator=gen)[:n]]


def ood_tasks(p: int, id_tasks: list[tuple[int, int]], n_ood: int, gen: torch.Generator,
              allow_zero: bool = True) -> list[tuple[int, int]]:
    """The grid minus the i.d. tasks, shuffled; the first min(n_ood, rest), trimmed to a multiple of 8."""
    rest = random_tasks(p, len(task_grid(p, allow_zero)) - len(set(id_tasks)), gen, allow_zero, set(id_tasks))
    keep = min(n_ood, len(rest)) // 8 * 8
    if keep == 0:
        raise ConfigError(f"task.n_ood_tasks: no o.o.d. tasks left for p={p} with {len(id_tasks)} i.d. tasks; "
                          "lower n_tasks or raise p")
    return rest[:keep]


def split_pairs(p: int, alpha: float, seed: int, draw: str = "torch") -> tuple[Tensor, Tensor]:
    """One permutation of the p² pair ids (pair = x·p + y): the first round(α·p²) are train pairs, the rest test.
    The permutation is torch's (``draw`` "torch") or NumPy's legacy ``RandomState(seed)`` ("numpy"), which is the
    reference's column shuffle of its (p², tasks) index table."""
    if draw == "numpy":
        perm = torch.from_numpy(np.random.RandomState(seed).permutation(p * p))
    else:
        perm = torch.randperm(p * p, generator=torch.Generator().manual_seed(seed))
    n_train = round(alpha * p * p)
    if not 0 < n_train < p * p:
        raise ConfigError(f"task.alpha: {alpha} leaves no train or no test pairs for p={p}")
    return perm[:n_train], perm[n_train:]


def sequences(tasks: Tensor, pair_ids: Tensor, p: int) -> tuple[Tensor, Tensor]:
    """Inputs and next-token targets of sequences ``x1 y1 z1 x2 ...``: ``tasks`` (n, 2), ``pair_ids`` (n, shots).
    The model reads tokens 1..3·shots−1 and predicts 2..3·shots; only z targets count (others are IGNORE)."""
    x, y = pair_ids // p, pair_ids % p
    z = (tasks[:, :1] * x + tasks[:, 1:] * y) % p
    tokens = torch.stack([x, y, z], dim=2).flatten(1)
    targets = tokens[:, 1:].clone()
    targets[:, (torch.arange(targets.shape[1]) % 3) != 1] = IGNORE  # target index 3k+1 is z of example k
    return tokens[:, :-1], targets


def pair_stream(pairs: Tensor, start: int, count: int, seed: int) -> Tensor:
    """``count`` pair ids from position ``start`` of an endless stream of shuffled passes over ``pairs`` (pass e
    shuffled with (seed, e)): stateless, so a resumed run draws what an uninterrupted one would have."""
    n = len(pairs)
    pieces, pos, end = [], start, start + count
    while pos < end:
        epoch, offset = divmod(pos, n)
        perm = torch.randperm(n, generator=torch.Generator().manual_seed(subseed(seed, f"pairs:{epoch}")))
        take = min(n - offset, end - pos)
        pieces.append(pairs[perm[offset : offset + take]])
        pos += take
    return torch.cat(pieces) if pieces else pairs[:0]


def iid_pairs(pairs: Tensor, count: int, seed: int) -> Tensor:
    """``count`` pair ids drawn uniformly with replacement (the reference's sampler, whose permutation of a range
    far longer than the pair list, taken modulo its length, is i.i.d. in effect): a pair may recur in a sequence."""
    return pairs[torch.randint(len(pairs), (count,), generator=torch.Generator().manual_seed(seed))]


def balanced_batch(p: int, tasks: Tensor, pairs: Tensor, batch_size: int, n_shots: int, step: int, seed: int,
                   shared: bool = True, iid: bool = False) -> tuple[Tensor, Tensor]:
    """One training batch of ``batch_size`` sequences, batch_size / n_tasks for every task. Shared mode: the rows
    of pair ids are drawn once and given to every task, so the task's sequences differ only in z. Pair ids come
    from the pass stream (``pair_stream``), or i.i.d. with replacement when ``iid``."""
    n_tasks = len(tasks)
    if batch_size % n_tasks:
        raise ConfigError(f"train.batch_size: {batch_size} is not a multiple of task.n_tasks={n_tasks}")
    rows = batch_size // n_tasks
    per_batch = rows * n_shots * (1 if shared else n_tasks)
    if iid:
        ids = iid_pairs(pairs, per_batch, subseed(seed, f"iid:{step}"))
    else:
        order = torch.Generator().manual_seed(subseed(seed, f"batch:{step}"))
        ids = pair_stream(pairs, step * per_batch, per_batch, seed)[torch.randperm(per_batch, generator=order)]
    if shared:
        ids = ids.view(1, rows, n_shots).expand(n_tasks, rows, n_shots)
    ids = ids.reshape(batch_size, n_shots)
    return sequences(tasks.repeat_interleave(rows, dim=0), ids, p)


class ModularTask:
    """The pre-training tasks, the o.o.d. tasks, the pair split, the four evaluation sets and the batch source."""

    def __init__(self, cfg: ModularTaskConfig):
        self.cfg = cfg
        gen = torch.Generator().manual_seed(cfg.task_seed)
        if cfg.task_rule == "random":
            tasks = random_tasks(cfg.p, cfg.n_tasks, gen, cfg.allow_zero_components)
        else:
            tasks = rectangular_tasks(cfg.p, cfg.n_tasks, gen, cfg.allow_zero_components)
            if cfg.task_rule == "mixed":
                tasks += random_tasks(cfg.p, cfg.n_random, gen, cfg.allow_zero_components, set(tasks))
        self.id_tasks = tasks
        self.ood_tasks = ood_tasks(cfg.p, tasks, cfg.n_ood_tasks, gen, cfg.allow_zero_components)
        self.train_pairs, self.test_pairs = split_pairs(cfg.p, cfg.alpha, cfg.split_seed, cfg.split_draw)

    def batch_size(self, requested: int) -> int:
        """The smallest multiple of the task count at least ``requested`` (every batch holds every task equally)."""
        n = len(self.id_tasks)
        return -(-requested // n) * n

    def _eval_set(self, tasks: list[tuple[int, int]], pairs: Tensor, per_batch: int, seed: int,
                  iid: bool = False) -> EvalSet:
        t, shared = torch.tensor(tasks), self.cfg.eval_rows == "shared"
        batches = [balanced_batch(self.cfg.p, t, pairs, per_batch, self.cfg.n_shots, step, seed, shared, iid)
                   for step in range(self.cfg.eval_batches)]
        return EvalSet(torch.cat([b[0] for b in batches]), {"designated": torch.cat([b[1] for b in batches])},
                       scoring="shots")

    def build(self, seed: int) -> TaskData:
        cfg = self.cfg
        id_batch = self.batch_size(cfg.eval_batch_size)
        sets = {
            "id/train": self._eval_set(self.id_tasks, self.train_pairs, id_batch, subseed(seed, "eval:id/train")),
            "id/test": self._eval_set(self.id_tasks, self.test_pairs, id_batch, subseed(seed, "eval:id/test")),
            "ood/train": self._eval_set(self.ood_tasks, self.train_pairs, len(self.ood_tasks),
                                        subseed(seed, "eval:ood/train")),
            "ood/test": self._eval_set(self.ood_tasks, self.test_pairs, len(self.ood_tasks),
                                       subseed(seed, "eval:ood/test")),
        }
        if cfg.eval_iid:  # the reference's figure beside the strict one (pairs may recur inside a sequence)
            for name, s in list(sets.items()):
                tasks = self.ood_tasks if name.startswith("ood") else self.id_tasks
                pairs = self.test_pairs if name.endswith("test") else self.train_pairs
                sets[f"{name}:iid"] = self._eval_set(tasks, pairs, len(s.inputs) // cfg.eval_batches,
                                                     subseed(seed, f"eval:{name}:iid"), iid=True)
        tasks, order = torch.tensor(self.id_tasks), subseed(seed, "order")
        shared, iid = cfg.batch_mode == "balanced_shared", cfg.pair_draw == "iid"

        def batch_fn(step: int, batch_size: int) -> tuple[Tensor, Tensor]:
            return balanced_batch(cfg.p, tasks[:cfg.curriculum_tasks(step)], self.train_pairs,
                                  self.batch_size(batch_size), cfg.n_shots, step, order, shared, iid)

        empty = torch.zeros(0, 3 * cfg.n_shots - 1, dtype=torch.long)
        zero_tasks = sum(1 for a, b in self.id_tasks + self.ood_tasks if a == 0 or b == 0)
        info = {"id_tasks": self.id_tasks, "ood_tasks": self.ood_tasks, "n_train_pairs": len(self.train_pairs),
                "tasks_with_a_zero": zero_tasks, "set_sizes": {n: len(s) for n, s in sets.items()}}
        artifacts = {"tasks.json": json.dumps({"id": self.id_tasks, "ood": self.ood_tasks,
                                               "train_pairs": self.train_pairs.tolist()})}
        return TaskData(cfg.vocab_size or cfg.p, 3 * cfg.n_shots - 1, empty, empty, sets, info, artifacts,
                        batch_fn=batch_fn, steps_per_epoch=cfg.steps_per_epoch)
