"""The Emb-MLP of the reasoning-bias study (Definition 1): G(X) = tanh((Σ_s E[s]) W1) W2.

Summed token embeddings, one hidden layer, no biases, no positions, no attention — the smallest model in which
the study's embedding dynamics (Proposition 1) can be watched. tanh satisfies the paper's Assumption 1 (σ(0) = 0,
σ'(0) = 1, bounded derivatives). Initialized by the same γ rule as the transformer: E and W1 with d_model^-γ,
W2 (group ``head``) with d_ff^-γ.
"""

from __future__ import annotations

from typing import Literal

import torch
from torch import Tensor, nn

from reasonlab.config import EmbMLPConfig


class EmbMLP(nn.Module):
    def __init__(self, cfg: EmbMLPConfig, vocab_size: int):
        super().__init__()
        self.cfg, self.vocab_size = cfg, vocab_size
        self.embed = nn.Embedding(vocab_size, cfg.d_model)
        self.W1 = nn.Linear(cfg.d_model, cfg.d_ff, bias=False)
        self.W1.init_group = "mlp"
        self.W2 = nn.Linear(cfg.d_ff, vocab_size, bias=False)
        self.W2.init_group = "head"

    def forward(self, tokens: Tensor, positions: Literal["last"] = "last") -> Tensor:
        """Logits (B, V) for the whole input: the model is order-blind, so only "last" makes sense."""
        if positions != "last":
            raise ValueError("EmbMLP gives one prediction per sequence; use positions='last'")
        return self.W2(torch.tanh(self.embed(tokens).sum(1) @ self.W1.weight.T))
