"""Probes of an in-context modular arithmetic model (modular-icl spec §7): what algorithm did it learn?

Each probe takes a model and the run's task and returns arrays and figures-to-be as plain numbers, so it can be
tested on constructed models and inputs. The predictors are the two candidate algorithms of the paper's Fig. 5:
*ratio matching* (RM: a query that is a multiple c·(x_i, y_i) of a context pair is answered c·z_i) and *modular
regression* (MR: a query in the Z_p-span of the context pairs, i.e. solving for (a, b)). Tasks with a zero
component are left out, as in the reference's analyses.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from reasonlab.analysis.geometry import pca
from reasonlab.models.transformer import Transformer

GRID_SHOTS = (1, 2, 3, 4, 6, 8, 13, 31)
CORRUPTIONS = (0, 1, 2, 4, 8)


# ---- number theory over Z_p ---------------------------------------------------------------------------------
def primitive_root(p: int) -> int:
    """The smallest generator of Z_p^*."""
    factors = {q for q in range(2, p) if (p - 1) % q == 0 and all(q % r for r in range(2, q))}
    return next(g for g in range(2, p) if all(pow(g, (p - 1) // q, p) != 1 for q in factors)) if p > 2 else 1


def discrete_logs(p: int, root: int | None = None) -> dict[int, int]:
    """log_g(v) for v in 1..p−1."""
    g = root or primitive_root(p)
    return {pow(g, k, p): k for k in range(p - 1)}


def ratio_matching(context: list[tuple[int, int]], p: int) -> np.ndarray:
    """RM(x, y) = 1 when (x, y) ≡ c·(x_i, y_i) for a context pair i and some c in Z_p, a (p, p) grid."""
    grid = np.zeros((p, p), dtype=bool)
    for x, y in context:
        for c in range(p):
            grid[c * x % p, c * y % p] = True
    return grid


def rank_mod_p(pairs: list[tuple[int, int]], p: int) -> int:
    """Rank over Z_p of the 2-vectors ``pairs`` (0, 1 or 2)."""
    nonzero = [(x % p, y % p) for x, y in pairs if (x % p, y % p) != (0, 0)]
    if not nonzero:
        return 0
    x0, y0 = nonzero[0]
    return 2 if any((x0 * y - y0 * x) % p for x, y in nonzero[1:]) else 1


def modular_regression(context: list[tuple[int, int]], p: int) -> np.ndarray:
    """MR(x, y) = 1 when (x, y) lies in the Z_p-span of the context pairs (then (a, b) is determined on it)."""
    if rank_mod_p(context, p) == 2:
        return np.ones((p, p), dtype=bool)
    return ratio_matching(context, p)  # a span of collinear pairs is their line


def nonzero_tasks(tasks: list[tuple[int, int]], limit: int | None = None) -> list[tuple[int, int]]:
    """Tasks with a, b ≠ 0 (spec §7), the first ``limit`` of them."""
    kept = [(a, b) for a, b in tasks if a and b]
    return kept[:limit] if limit else kept


def probe_context(p: int, n: int, seed: int, pool: Tensor | None = None) -> list[tuple[int, int]]:
    """``n`` distinct seeded pairs, never (0, 0): the fixed context of the grid and OV probes, drawn from all p²
    pairs or, given ``pool`` (pair ids), from those (fewer than ``n`` when the pool is smaller)."""
    gen = torch.Generator().manual_seed(seed)
    pool = torch.arange(p * p) if pool is None else pool
    ids = [int(pool[i]) for i in torch.randperm(len(pool), generator=gen) if int(pool[i]) != 0][:n]
    return [(i // p, i % p) for i in ids]


def example_tokens(task: tuple[int, int], pairs: list[tuple[int, int]] | np.ndarray, p: int) -> Tensor:
    """The tokens ``x y z x y z ...`` of ``pairs`` under ``task``."""
    a, b = task
    pairs = torch.as_tensor(np.asarray(pairs), dtype=torch.long).reshape(-1, 2)
    z = (a * pairs[:, 0] + b * pairs[:, 1]) % p
    return torch.stack([pairs[:, 0], pairs[:, 1], z], dim=1).flatten()


@torch.no_grad()
def _predict_last(model: Transformer, tokens: Tensor, batch: int = 1024) -> Tensor:
    return torch.cat([model(tokens[i : i + batch]).argmax(-1) for i in range(0, len(tokens), batch)])


# ---- 1. k-shot grids vs ratio matching and modular regression -----------------------------------------------
@dataclass
class ShotGrid:
    """One k of probe 1: the model's correctness over all p² queries per task and the two predictors."""

    k: int
    correct: np.ndarray  # (n_tasks, p, p) bool
    rm: np.ndarray  # (p, p) bool
    mr: np.ndarray  # (p, p) bool

    def scores(self, unseen: np.ndarray | None = None) -> dict:
        """Accuracy overall, on RM cells, on MR-but-not-RM cells ("composition") and off MR (nan when empty); with
        ``unseen`` (a (p, p) mask of the pairs training never showed), the same on those queries only, under
        ``unseen`` — where neither a stored answer nor a seen pair can help, so what remains is the algorithm's."""
        def acc(mask: np.ndarray) -> float:
            return float(self.correct[:, mask].mean()) if mask.any() else float("nan")

        everywhere = np.ones_like(self.rm)
        out: dict = {"accuracy": acc(everywhere), "on_rm": acc(self.rm), "composition": acc(self.mr & ~self.rm),
                     "off_mr": acc(~self.mr), "rm_fraction": float(self.rm.mean()),
                     "mr_fraction": float(self.mr.mean())}
        if unseen is not None:
            out["unseen"] = {"accuracy": acc(unseen), "on_rm": acc(unseen & self.rm),
                             "composition": acc(unseen & self.mr & ~self.rm), "cells": int(unseen.sum()),
                             "composition_cells": int((unseen & self.mr & ~self.rm).sum())}
        return out


def shot_grids(model: Transformer, tasks: list[tuple[int, int]], context: list[tuple[int, int]], p: int,
               shots: tuple[int, ...] = GRID_SHOTS) -> list[ShotGrid]:
    """For each k, the first k context examples of each task before every one of the p² queries."""
    queries = np.array([(x, y) for x in range(p) for y in range(p)])
    out = []
    for k in (k for k in shots if k <= len(context)):
        correct = np.zeros((len(tasks), p, p), dtype=bool)
        for t, task in enumerate(tasks):
            prefix = example_tokens(task, context[:k], p)
            seqs = torch.cat([prefix.expand(len(queries), -1), torch.as_tensor(queries)], dim=1)
            truth = (task[0] * queries[:, 0] + task[1] * queries[:, 1]) % p
            correct[t] = (_predict_last(model, seqs).numpy() == truth).reshape(p, p)
        out.append(ShotGrid(k, correct, ratio_matching(context[:k], p), modular_regression(context[:k], p)))
    return out


# ---- 2. shot ceilings ----------------------------------------------------------------------------------------
def shot_answerable(pair_ids: Tensor, p: int) -> dict[str, np.ndarray]:
    """(B, n_shots) masks: could RM, and could MR, answer query k (example k) of each sequence from examples
    0..k−1? Exact integer arithmetic: over Z_p (p prime) a nonzero query is a multiple c·(x_i, y_i) of a nonzero
    example exactly when their cross product x·y_i − y·x_i vanishes, and the examples span Z_p² exactly when two of
    them have a nonzero cross product; (0, 0) is 0·(anything), so RM answers it at every shot."""
    ids = pair_ids.numpy().astype(np.int64)
    x, y = ids // p, ids % p
    cross = (x[:, :, None] * y[:, None, :] - y[:, :, None] * x[:, None, :]) % p  # (B, query k, example j)
    earlier = np.tri(ids.shape[1], k=-1, dtype=bool)  # j < k
    rm = ((cross == 0) & (ids != 0)[:, None, :] & earlier).any(-1) | (ids == 0)
    spans = np.cumsum(((cross != 0) & earlier).any(-1), axis=1) > 0  # some pair among examples 0..i spans Z_p²
    mr = rm | np.pad(spans[:, :-1], ((0, 0), (1, 0)))  # after examples 0..k−1
    return {"rm": rm, "mr": mr}


# ---- 3. attention maps ---------------------------------------------------------------------------------------
def attention_scores(pattern: np.ndarray) -> dict[str, float]:
    """Summary of one head's (T, T) causal pattern of ``x y z`` examples: mass on the previous token, within the
    query's example, on the same role (period 3), and, from the positions that predict z, on earlier examples."""
    T = pattern.shape[0]
    t = np.arange(T)
    same_example = (t[:, None] // 3) == (t[None, :] // 3)
    causal = t[None, :] <= t[:, None]
    period = ((t[:, None] - t[None, :]) % 3 == 0) & (t[None, :] < t[:, None])
    predicts_z = t % 3 == 1
    earlier = (t[None, :] // 3) < (t[:, None] // 3)
    rows = slice(1, None)
    return {"previous_token": float(pattern[t[1:], t[1:] - 1].mean()),
            "within_example": float((pattern * (same_example & causal)).sum(1)[rows].mean()),
            "same_role": float((pattern * period).sum(1)[rows].mean()),
            "z_to_earlier_examples": float((pattern * earlier).sum(1)[predicts_z & (t >= 3)].mean())}


@torch.no_grad()
def attention_maps(model: Transformer, tokens: Tensor) -> np.ndarray:
    """(layers, heads, T, T) softmax attention of one sequence."""
    _, cache = model.run_with_cache(tokens[None])
    return np.stack([cache[f"blocks.{i}.attn.hook_pattern"][0].numpy() for i in range(len(model.blocks))])


# ---- 4./5. per-head OV outputs, their cosine structure and PCA ---------------------------------------------
@torch.no_grad()
def head_outputs(model: Transformer, task: tuple[int, int], context: list[tuple[int, int]], shot: int, p: int,
                 n_shots: int) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Run example ``shot`` over all p² pairs (the other shots fixed to ``context``) and return the queries and,
    per role x/y/z, each head's attention output through its slice of W_O: (p², layers, heads, d_model)."""
    queries = np.array([(x, y) for x in range(p) for y in range(p)])
    rows = []
    for q in queries:
        pairs = list(context[:shot]) + [tuple(q)] + list(context[shot : n_shots - 1])
        rows.append(example_tokens(task, pairs, p))
    tokens = torch.stack(rows)[:, : model.cfg.max_positions]
    with model.hooks() as cache:
        model(tokens, positions="all")
    roles = {role: 3 * shot + i for i, role in enumerate("xyz") if 3 * shot + i < tokens.shape[1]}
    out = {}
    for role, pos in roles.items():
        per_layer = []
        for i, block in enumerate(model.blocks):
            z = cache[f"blocks.{i}.attn.hook_z"][:, :, pos]  # (N, H, d_v)
            w = block.attn.W_O.weight.view(-1, block.attn.n_heads, block.attn.d_v)  # (d_model, H, d_v)
            per_layer.append(torch.einsum("nhv,dhv->nhd", z, w))
        out[role] = torch.stack(per_layer, dim=1).numpy()
    return queries, out


def standardized_cosine(rows: np.ndarray) -> np.ndarray:
    """Cosine matrix after unit norm, per-feature standardization and unit norm again (the reference's order)."""
    def unit(a: np.ndarray) -> np.ndarray:
        return a / np.maximum(np.linalg.norm(a, axis=1, keepdims=True), 1e-12)

    r = unit(rows)
    r = unit((r - r.mean(0)) / np.maximum(r.std(0), 1e-12))
    return r @ r.T


def ratio_order(queries: np.ndarray, p: int) -> np.ndarray:
    """Indices of the queries with x, y ≠ 0 ordered by the discrete log of y/x, then by x."""
    logs = discrete_logs(p)
    keep = [i for i, (x, y) in enumerate(queries) if x and y]
    return np.array(sorted(keep, key=lambda i: (logs[queries[i][1] * pow(int(queries[i][0]), -1, p) % p],
                                                 logs[int(queries[i][0])])))


def ratio_contrast(cos: np.ndarray, queries: np.ndarray, p: int) -> float:
    """Mean cosine between inputs of equal ratio y/x minus that between unequal ratios (x, y ≠ 0): how strongly a
    head's output is organized by ratio, the kaleidoscope pattern of the reference's cosine figures."""
    keep = np.array([i for i, (x, y) in enumerate(queries) if x and y])
    ratio = np.array([queries[i][1] * pow(int(queries[i][0]), -1, p) % p for i in keep])
    c = cos[np.ix_(keep, keep)]
    same = ratio[:, None] == ratio[None, :]
    off = ~np.eye(len(keep), dtype=bool)
    return float(c[same & off].mean() - c[~same].mean())


def circle_pca(xy_features: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Top-2 PCA of one head's concatenated x- and y-position outputs over all p² inputs: (scores, explained)."""
    scores, explained = pca(torch.as_tensor(xy_features, dtype=torch.float64), k=2)
    return scores, explained


# ---- 6. label corruption -------------------------------------------------------------------------------------
def corrupt(tokens: Tensor, examples: Tensor, p: int, gen: torch.Generator) -> Tensor:
    """Shift the z of the chosen examples (B, m) by a uniform nonzero residue."""
    out = tokens.clone()
    z_pos = 3 * examples + 2
    shift = torch.randint(1, p, z_pos.shape, generator=gen)
    out.scatter_(1, z_pos, (out.gather(1, z_pos) + shift) % p)
    return out


@torch.no_grad()
def shot_correct(model: Transformer, tokens: Tensor) -> np.ndarray:
    """(B, n_shots) correctness of each z prediction of full sequences ``x y z ...`` (B, 3·n_shots)."""
    logits = model(tokens[:, :-1], positions="all")
    pred = logits[:, 1::3].argmax(-1)
    return (pred == tokens[:, 2::3]).numpy()


def corruption_curves(model: Transformer, clean: Tensor, p: int, seed: int,
                      counts: tuple[int, ...] = CORRUPTIONS) -> dict[int, np.ndarray]:
    """(a) m random examples corrupted: per-shot accuracy on the clean positions only, per m."""
    n_shots = clean.shape[1] // 3
    gen = torch.Generator().manual_seed(seed)
    out = {}
    for m in (m for m in counts if m < n_shots):
        examples = torch.stack([torch.randperm(n_shots, generator=gen)[:m] for _ in range(len(clean))])
        correct = shot_correct(model, corrupt(clean, examples, p, gen)).astype(float)
        clean_mask = np.ones_like(correct, dtype=bool)
        np.put_along_axis(clean_mask, examples.numpy(), False, axis=1)
        with np.errstate(invalid="ignore"):
            out[m] = np.where(clean_mask, correct, 0).sum(0) / clean_mask.sum(0)
    return out


def corruption_map(model: Transformer, clean: Tensor, p: int, seed: int) -> np.ndarray:
    """(b) only example j corrupted: accuracy at every later shot k, an (n_shots, n_shots) map (nan for k ≤ j)."""
    n_shots = clean.shape[1] // 3
    gen = torch.Generator().manual_seed(seed)
    grid = np.full((n_shots, n_shots), np.nan)
    for j in range(n_shots - 1):
        examples = torch.full((len(clean), 1), j)
        grid[j, j + 1 :] = shot_correct(model, corrupt(clean, examples, p, gen))[:, j + 1 :].mean(0)
    return grid


# ---- 7. head masking -----------------------------------------------------------------------------------------
def heads_of(model: Transformer) -> list[tuple[int, int]]:
    return [(i, h) for i, block in enumerate(model.blocks) for h in range(block.attn.n_heads)]

