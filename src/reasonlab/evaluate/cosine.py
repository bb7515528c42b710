"""Cosines between weight rows: read off a model during training (``Kind.weights``) as well as by the
probes above, so the one definition lives on the evaluate floor."""

from __future__ import annotations

import numpy as np
from torch import Tensor


def cosine_matrix(rows: Tensor) -> np.ndarray:
    """Pairwise cosine similarity of the rows (n, d) -> (n, n)."""
    x = rows.detach().double()
    x = x / x.norm(dim=1, keepdim=True).clamp_min(1e-30)
    return (x @ x.T).numpy()


def mean_pairwise_cosine(rows: Tensor) -> float:
    """Mean cosine over unordered pairs of distinct rows (the reasoning-bias study's Fig. 7B statistic)."""
    c = cosine_matrix(rows)
    iu = np.triu_indices(len(c), k=1)
    return float(c[iu].mean()) if len(iu[0]) else float("nan")
