"""Embedding and attention geometry of the reasoning-bias study (spec §5, T1–T4): numbers first, figures apart.

Every function takes plain tensors (or a model) and returns numbers, so each can be tested on constructed inputs:
cosine matrices and their block statistics, the cosine predicted from the label distributions (Proposition 1),
the theoretical embedding profile exp(−(i−s)²/12) (Theorem 1), first-layer attention against 1/i (Lemma 1), the
alignment of W_V's top singular vector with reasoning vs memory embeddings (App. B.8), and PCA.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import Tensor

from reasonlab.evaluate.cosine import cosine_matrix


def _ranks(x: np.ndarray) -> np.ndarray:
    """Ranks with ties averaged (for Spearman's coefficient)."""
    order = np.argsort(x, kind="mergesort")
    ranks = np.empty(len(x))
    ranks[order] = np.arange(len(x), dtype=float)
    for v in np.unique(x):
        tie = x == v
        if tie.sum() > 1:
            ranks[tie] = ranks[tie].mean()
    return ranks


def pearson(a: np.ndarray, b: np.ndarray) -> float:
    a, b = np.asarray(a, float).ravel(), np.asarray(b, float).ravel()
    a, b = a - a.mean(), b - b.mean()
    denom = math.sqrt(float((a * a).sum() * (b * b).sum()))
    return float((a * b).sum() / denom) if denom > 0 else float("nan")


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    return pearson(_ranks(np.asarray(a, float).ravel()), _ranks(np.asarray(b, float).ravel()))


def _off_diagonal(c: np.ndarray) -> np.ndarray:
    return c[~np.eye(len(c), dtype=bool)]


def block_statistics(c: np.ndarray, memory: list[int], reasoning: list[int]) -> dict[str, float]:
    """T2's read-out of an anchor cosine matrix whose rows are ``memory`` then ``reasoning`` (indices into c):
    the memory block's mean and std off the diagonal (uniformly high expected) and Spearman(C, |i−j|) inside the
    reasoning block (banded decay expected: strongly negative)."""
    mem = c[np.ix_(memory, memory)]
    rsn = c[np.ix_(reasoning, reasoning)]
    i, j = np.triu_indices(len(reasoning), k=1)
    return {"memory_mean": float(_off_diagonal(mem).mean()), "memory_std": float(_off_diagonal(mem).std()),
            "reasoning_spearman_vs_distance": spearman(rsn[i, j], np.abs(i - j))}


def predicted_cosine(inputs: Tensor, labels: Tensor, tokens: list[int], vocab_size: int) -> np.ndarray:
    """Proposition 1's prediction C_pred[s, t] = cos(P_s − u, P_t − u): P_s is the label distribution of the
    training sequences containing token s, u the uniform distribution over the vocabulary."""
    u = torch.full((vocab_size,), 1.0 / vocab_size, dtype=torch.float64)
    rows = []
    for s in tokens:
        has = (inputs == s).any(1)
        p = torch.bincount(labels[has], minlength=vocab_size).double()
        rows.append(p / p.sum().clamp_min(1) - u)
    return cosine_matrix(torch.stack(rows))


def theoretical_embeddings(tokens: list[int], reasoning: set[int], d_model: int, gamma: float,
                           generator: torch.Generator | None = None) -> Tensor:
    """Theorem 1 (eq. 14): ŵ_s[i] = exp(−(i−s)²/12) − 1/d_m·[s reasoning] + ε_i, ε_i ~ N(0, d_m^−2γ), i = 1..d_m."""
    if d_model < max(tokens):
        raise ValueError(f"d_model {d_model} must be >= the largest token id {max(tokens)}")
    i = torch.arange(1, d_model + 1, dtype=torch.float64)
    rows = []
    for s in tokens:
        w = torch.exp(-((i - s) ** 2) / 12) - (1.0 / d_model if s in reasoning else 0.0)
        noise = torch.randn(d_model, generator=generator, dtype=torch.float64) * d_model ** (-gamma)
        rows.append(w + noise)
    return torch.stack(rows)


def profile_correlation(learned: Tensor, theory: Tensor, tokens: list[int], centre: int) -> float:
    """T4: Pearson r between s ↦ cos(w_centre, w_s) of the learned and of the theoretical rows (same token order)."""
    k = tokens.index(centre)
    return pearson(cosine_matrix(learned)[k], cosine_matrix(theory)[k])


@torch.no_grad()
def attention_deviation(model: torch.nn.Module, inputs: Tensor) -> float:
    """T1 (Lemma 1): max over sequences, rows i and columns j ≤ i of |A_ij − 1/i| in the first layer's attention."""
    _, cache = model.run_with_cache(inputs, names=["blocks.0.attn.hook_pattern"])
    pattern = cache["blocks.0.attn.hook_pattern"].double()  # (B, heads, T, T)
    t = pattern.shape[-1]
    uniform = torch.tril(torch.ones(t, t, dtype=torch.float64)) / torch.arange(1, t + 1, dtype=torch.float64)[:, None]
    return float((pattern - uniform).abs().amax())


def wv_alignment(w_v: Tensor, embed: Tensor, reasoning: list[int], memory: list[int]) -> dict[str, float]:
    """T3: SVD of the first layer's W_V as a map from embedding space (d_model × d_v); σ1/σ2 and the mean
    |cos(u1, E[s])| of the top left singular vector with reasoning vs memory embeddings."""
    w = w_v.detach().double()
    if w.shape[0] != embed.shape[1]:
        w = w.T  # nn.Linear stores (d_v, d_model)
    u, s, _ = torch.linalg.svd(w, full_matrices=False)
    u1 = u[:, 0]
    e = embed.detach().double()

    def mean_abs_cos(tokens: list[int]) -> float:
        rows = e[tokens]
        return float((rows @ u1).abs().div(rows.norm(dim=1).clamp_min(1e-30)).mean())

    r_rsn, r_mem = mean_abs_cos(reasoning), mean_abs_cos(memory)
    return {"sigma_ratio": float(s[0] / s[1]), "r_reasoning": r_rsn, "r_memory": r_mem,
            "reasoning_over_memory": r_rsn / r_mem if r_mem > 0 else float("inf")}


def pca(rows: Tensor, k: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """(scores (n, k), explained variance ratio (k,)) of the centred rows."""
    x = rows.detach().double()
    x = x - x.mean(0, keepdim=True)
    _, s, vh = torch.linalg.svd(x, full_matrices=False)
    var = s**2
    return (x @ vh[:k].T).numpy(), (var[:k] / var.sum()).numpy()
