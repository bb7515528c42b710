"""Mechanism analyses of the anchor-composition study (anchor spec §7, paper §5, App. D): which solution did the
model build, and where?

Each function takes arrays (attention patterns, vectors, weight rows) and returns numbers, so each is tested on a
constructed case with a known answer; ``analysis.anchor_probes`` feeds them from a saved run and draws them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from reasonlab.analysis.geometry import pca, spearman
from reasonlab.evaluate.cosine import cosine_matrix


# ---- information flow --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Edge:
    layer: int  # the attention layer: token ``src`` of layer ``layer`` feeds token ``dst`` of layer ``layer + 1``
    src: int
    dst: int
    weight: float


def flow_edges(patterns: np.ndarray, threshold: float = 0.2) -> list[Edge]:
    """Edges of attention weight ≥ ``threshold`` in (layers, T, T) patterns (rows = queries), strongest first."""
    edges = [Edge(layer, int(src), int(dst), float(patterns[layer, dst, src]))
             for layer in range(patterns.shape[0]) for dst, src in zip(*np.nonzero(patterns[layer] >= threshold),
                                                                        strict=True)]
    return sorted(edges, key=lambda e: -e.weight)


def flow_summary(patterns: np.ndarray, key_pos: np.ndarray) -> dict[str, list[float]]:
    """Mean attention, per layer, from the last token to the key and to each anchor, and from each anchor to the
    key, over sequences (N, layers, T, T) whose key sits at ``key_pos`` (anchors right after it)."""
    n = np.arange(len(key_pos))
    last = patterns.shape[-1] - 1
    out: dict[str, list[float]] = {}
    for name, (q, k) in {"last->key": (last, key_pos), "last->a1": (last, key_pos + 1), "last->a2": (last, key_pos + 2),
                         "a1->key": (key_pos + 1, key_pos), "a2->key": (key_pos + 2, key_pos)}.items():
        q = np.broadcast_to(q, n.shape)
        out[name] = [float(patterns[n, layer, q, k].mean()) for layer in range(patterns.shape[1])]
    return out


# ---- post-attention representations and fused vectors -----------------------------------------------------
def mirror_merge(vectors: np.ndarray, pairs: list[tuple[int, int]]) -> float:
    """Centroid distance between (a, b) and (b, a), averaged over mirror pairs with a ≠ b, divided by the mean
    distance between centroids of different unordered pairs: near 0 when mirror pairs coincide (the signature of
    the symmetric solution), near 1 when order is kept apart as much as pairs are."""
    labels = [tuple(p) for p in pairs]
    centroids = {p: vectors[[i for i, q in enumerate(labels) if q == p]].mean(0) for p in set(labels)}
    mirrors = [np.linalg.norm(centroids[p] - centroids[(p[1], p[0])]) for p in centroids
               if p[0] < p[1] and (p[1], p[0]) in centroids]
    unordered = {tuple(sorted(p)) for p in centroids}
    merged = {u: np.mean([centroids[p] for p in centroids if tuple(sorted(p)) == u], axis=0) for u in unordered}
    keys = sorted(merged)
    between = [np.linalg.norm(merged[a] - merged[b]) for i, a in enumerate(keys) for b in keys[i + 1 :]]
    return float(np.mean(mirrors) / np.mean(between)) if mirrors and between else float("nan")


def boxed_contrast(cos: np.ndarray, boxes: np.ndarray) -> float:
    """Mean cosine on the boxed cells (equal targets) minus the mean off them."""
    return float(cos[boxes].mean() - cos[~boxes].mean()) if boxes.any() and (~boxes).any() else float("nan")


# ---- condensation --------------------------------------------------------------------------------------------
@dataclass
class Condensation:
    order: np.ndarray  # rows reordered: groups (connected components of cos > threshold) largest first
    groups: list[list[int]]
    cos: np.ndarray

    def scores(self, threshold: float) -> dict[str, float]:
        n = len(self.cos)
        iu = np.triu_indices(n, k=1)
        return {"groups": len(self.groups), "largest_group_share": len(self.groups[0]) / n,
                "pairs_above": float((self.cos[iu] > threshold).mean()) if n > 1 else 0.0}


def condensation(rows: Tensor, threshold: float = 0.7) -> Condensation:
    """Cosine between weight rows (neurons), grouped by connected components of the graph cos > ``threshold``:
    small initialization condenses neurons onto a few directions (paper §5.3)."""
    cos = cosine_matrix(rows)
    n = len(cos)
    parent = list(range(n))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, j in zip(*np.nonzero(np.triu(cos > threshold, k=1)), strict=True):
        parent[find(int(i))] = find(int(j))
    members: dict[int, list[int]] = {}
    for i in range(n):
        members.setdefault(find(i), []).append(i)
    groups = sorted(members.values(), key=lambda g: (-len(g), g[0]))
    return Condensation(np.array([i for g in groups for i in g]), groups, cos)


# ---- embedding structure and spectra -----------------------------------------------------------------------
def ordinal_structure(rows: Tensor, values: list[int], steps: tuple[int, ...] = (3, 4), seed: int = 0
                      ) -> dict[str, float]:
    """|Spearman(value, PC1)| of embedding rows, and per step s the mean pairwise cosine of the difference vectors
    e(t+s) − e(t) over t (a consistent direction per step means an ordered chain), beside the same for random
    token pairs as the baseline."""
    scores, _ = pca(rows, k=1)
    out = {"pc1_spearman": abs(spearman(scores[:, 0], np.array(values, dtype=float)))}
    index = {v: i for i, v in enumerate(values)}
    for s in steps:
        diffs = rows[[index[v + s] for v in values if v + s in index]] - rows[[index[v] for v in values
                                                                            if v + s in index]]
        out[f"step{s}_cosine"] = _mean_offdiag(cosine_matrix(diffs))
    gen = torch.Generator().manual_seed(seed)
    a, b = torch.randint(len(values), (2, 64), generator=gen)
    keep = a != b
    out["random_step_cosine"] = _mean_offdiag(cosine_matrix(rows[b[keep]] - rows[a[keep]]))
    return out


def _mean_offdiag(c: np.ndarray) -> float:
    iu = np.triu_indices(len(c), k=1)
    return float(c[iu].mean()) if len(iu[0]) else float("nan")


def singular_values(model: torch.nn.Module) -> dict[str, np.ndarray]:
    """Singular values of every weight matrix (2-D parameter), largest first."""
    return {name: torch.linalg.svdvals(p.detach().double()).numpy() for name, p in model.named_parameters()
            if p.dim() == 2}


def covariance_spectrum(rows: Tensor) -> np.ndarray:
    """Eigenvalues of the covariance of embedding rows, largest first."""
    x = rows.detach().double()
    x = x - x.mean(0, keepdim=True)
    return torch.linalg.eigvalsh(x.T @ x / max(len(x) - 1, 1)).flip(0).numpy()
