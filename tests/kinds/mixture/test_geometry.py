"""Geometry functions of the reasoning-bias study on constructed inputs (spec §5)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from reasonlab.analysis.geometry import (
    attention_deviation,
    block_statistics,
    cosine_matrix,
    pca,
    pearson,
    predicted_cosine,
    profile_correlation,
    spearman,
    theoretical_embeddings,
    wv_alignment,
)
from reasonlab.config import ModelConfig
from reasonlab.init import apply_init_rate
from reasonlab.models.transformer import Transformer


def test_cosine_and_correlations():
    c = cosine_matrix(torch.tensor([[1.0, 0.0], [0.0, 2.0], [3.0, 0.0]]))
    assert np.allclose(c, [[1, 0, 1], [0, 1, 0], [1, 0, 1]])
    x = np.arange(10.0)
    assert spearman(x, x**3) == pytest.approx(1.0) and pearson(x, x**3) < 0.95
    assert spearman(x, -x) == pytest.approx(-1.0)
    assert spearman(np.array([1, 1, 2, 3.0]), np.array([1, 1, 2, 3.0])) == pytest.approx(1.0)  # ties


def test_block_statistics_on_a_constructed_matrix():
    n = 10
    c = np.zeros((2 * n, 2 * n))
    c[:n, :n] = 0.9
    i, j = np.indices((n, n))
    c[n:, n:] = np.exp(-np.abs(i - j) / 3)
    np.fill_diagonal(c, 1.0)
    stats = block_statistics(c, list(range(n)), list(range(n, 2 * n)))
    assert stats["memory_mean"] == pytest.approx(0.9) and stats["memory_std"] == pytest.approx(0.0)
    assert stats["reasoning_spearman_vs_distance"] == pytest.approx(-1.0)


def test_predicted_cosine_follows_label_distributions():
    # tokens 1 and 2 share one label law; token 3's labels are shifted by +5
    gen = torch.Generator().manual_seed(0)
    z = torch.randint(30, 60, (3000,), generator=gen)
    tok = torch.tensor([1, 2, 3]).repeat(1000)
    labels = z + torch.where(tok == 3, 5, 0)
    inputs = torch.stack([z, tok], 1)
    c = predicted_cosine(inputs, labels, [1, 2, 3], vocab_size=100)
    assert c[0, 1] > 0.95 and c[0, 2] < c[0, 1] - 0.1


def test_theoretical_profile_matches_the_closed_form():
    tokens = list(range(11, 41))
    w = theoretical_embeddings(tokens, reasoning=set(range(11, 21)), d_model=400, gamma=10.0)  # noise ~ 0
    c = cosine_matrix(w)
    k = tokens.index(15)
    for d, expected in zip(range(1, 6), (0.96, 0.85, 0.69, 0.51, 0.35), strict=True):
        assert c[k, k + d] == pytest.approx(math.exp(-d * d / 24), abs=0.01)
        assert c[k, k + d] == pytest.approx(expected, abs=0.01)
    assert profile_correlation(w, w, tokens, 15) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="d_model"):
        theoretical_embeddings([500], set(), d_model=400, gamma=1.0)


def _model(gamma: float) -> Transformer:
    cfg = ModelConfig(d_model=64, d_k=32, d_v=32, d_ff=128)
    model = Transformer(cfg, 201)
    apply_init_rate(model, gamma, generator=torch.Generator().manual_seed(1))
    return model


def test_first_layer_attention_is_uniform_only_at_small_init():
    x = torch.randint(21, 121, (64, 9), generator=torch.Generator().manual_seed(0))
    assert attention_deviation(_model(2.0), x) < 1e-3
    assert attention_deviation(_model(0.3), x) > 0.05


def test_wv_alignment_finds_the_reasoning_direction():
    gen = torch.Generator().manual_seed(0)
    d = 32
    direction = torch.randn(d, generator=gen)
    embed = torch.randn(40, d, generator=gen) * 0.1
    embed[11:21] += direction  # reasoning anchors share a direction
    w_v = torch.outer(torch.randn(16, generator=gen), direction) + 0.01 * torch.randn(16, d, generator=gen)
    out = wv_alignment(w_v, embed, list(range(11, 21)), list(range(1, 11)))
    assert out["sigma_ratio"] > 2 and out["reasoning_over_memory"] > 3


def test_pca_on_a_line():
    t = torch.linspace(0, 1, 50)[:, None]
    rows = t * torch.tensor([[1.0, 2.0, 3.0]]) + 1e-4 * torch.randn(50, 3, generator=torch.Generator().manual_seed(0))
    scores, ratio = pca(rows, 2)
    assert ratio[0] > 0.999 and abs(spearman(scores[:, 0], t.ravel().numpy())) == pytest.approx(1.0)
