"""One configurable decoder-only transformer.

Pre- or post-LN (or no LayerNorm), learned / RoPE / no positions, biases on or off, d_k and d_v independent of
d_model, ReLU or GELU, tied or untied head. The forward pass has no hooks in it unless a cache is requested:
``run_with_cache`` records TransformerLens-style names (``blocks.{l}.attn.hook_pattern``,
``blocks.{l}.hook_attn_out``, ``blocks.{l}.hook_resid_post`` ...) and costs one ``is None`` check per block
when off.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Literal, NamedTuple

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from reasonlab.config import ModelConfig


def _linear(d_in: int, d_out: int, bias: bool, group: str) -> nn.Linear:
    layer = nn.Linear(d_in, d_out, bias=bias)
    layer.init_group = group  # read by reasonlab.init
    return layer


def _rope(x: Tensor, cos: Tensor, sin: Tensor) -> Tensor:
    """Rotary positions on the last axis's halves x1, x2: (x1 cos − x2 sin, x1 sin + x2 cos), as x·cos + roll(x)·sin
    with ``cos`` = (cos, cos) and ``sin`` = (−sin, sin) precomputed over the whole width: the same numbers bit for
    bit (a − b is a + (−b) in floating point), in three element-wise passes and one swap of the halves instead
    of slices, four products and a concatenation."""
    return x * cos + x.roll(x.shape[-1] // 2, -1) * sin


class Queries(NamedTuple):
    """The positions a final block computes: ``index`` into the sequence axis (a slice for the last position)
    and the (Q, T) boolean mask of the keys each may see (None when every key is visible, as for the last)."""

    index: slice | Tensor
    mask: Tensor | None


def _ablated(z: Tensor, heads: dict[int, str]) -> Tensor:
    """z (B, H, T, d_v) with the named heads zeroed or replaced by their mean over the batch."""
    z = z.clone()
    for h, how in heads.items():
        z[:, h] = 0.0 if how == "zero" else z[:, h].mean(0, keepdim=True)
    return z


class Attention(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        h = cfg.n_heads
        self.n_heads, self.d_k, self.d_v = h, cfg.d_k, cfg.d_v
        self.W_Q = _linear(cfg.d_model, h * cfg.d_k, cfg.block_bias, "qk")
        self.W_K = _linear(cfg.d_model, h * cfg.d_k, cfg.block_bias, "qk")
        self.W_V = _linear(cfg.d_model, h * cfg.d_v, cfg.block_bias, "vo")
        self.W_O = _linear(h * cfg.d_v, cfg.d_model, cfg.block_bias, "vo")
        self.rope = cfg.positions == "rope"
        self.ablate: dict[int, str] = {}  # head -> "zero" | "mean", set only inside ``Transformer.ablated``
        if self.rope and cfg.d_k % 2:
            raise ValueError("model.d_k must be even for RoPE positions")

    def forward(self, x: Tensor, rope: tuple[Tensor, Tensor] | None, cache: dict | None, prefix: str,
                queries: Queries | None = None) -> Tensor:
        """Causal self-attention; with ``queries`` only those positions query (keys and values stay full)."""
        B, T, _ = x.shape
        xq = x if queries is None else x[:, queries.index]
        q = self.W_Q(xq).view(B, xq.shape[1], self.n_heads, self.d_k).transpose(1, 2)
        k = self.W_K(x).view(B, T, self.n_heads, self.d_k).transpose(1, 2)
        v = self.W_V(x).view(B, T, self.n_heads, self.d_v).transpose(1, 2)
        if rope is not None:
            q_rope = rope if queries is None else (rope[0][queries.index], rope[1][queries.index])
            q, k = _rope(q, *q_rope), _rope(k, *rope)
        if cache is None:
            mask = None if queries is None else queries.mask
            z = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=queries is None)
        else:
            scores = q @ k.transpose(-1, -2) / self.d_k**0.5
            mask = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()
            pattern = scores.masked_fill(~mask, float("-inf")).softmax(-1)
            z = pattern @ v
            cache[f"{prefix}.hook_pattern"] = pattern.detach()
            cache[f"{prefix}.hook_q"], cache[f"{prefix}.hook_k"] = q.detach(), k.detach()
            cache[f"{prefix}.hook_v"], cache[f"{prefix}.hook_z"] = v.detach(), z.detach()
        return self._out(z)

    def _out(self, z: Tensor) -> Tensor:
        if self.ablate:
            z = _ablated(z, self.ablate)
        B, _, T, _ = z.shape
        return self.W_O(z.transpose(1, 2).reshape(B, T, self.n_heads * self.d_v))

    def step(self, x: Tensor, rope: tuple[Tensor, Tensor] | None, kv: tuple[Tensor, Tensor], pos: Tensor
             ) -> Tensor:
        """One decoding step: ``x`` (B, 1, d) is each row's new position ``pos`` (B,); its key and value are
        written into the cache ``kv`` ((B, H, W, d) each) and it attends to columns ≤ its own position."""
        B = len(x)
        q = self.W_Q(x).view(B, 1, self.n_heads, self.d_k).transpose(1, 2)
        k = self.W_K(x).view(B, 1, self.n_heads, self.d_k).transpose(1, 2)
        v = self.W_V(x).view(B, 1, self.n_heads, self.d_v).transpose(1, 2)
        if rope is not None:
            q, k = _rope(q, *rope), _rope(k, *rope)
        K, V = kv
        rows = torch.arange(B, device=x.device)
        K[rows, :, pos], V[rows, :, pos] = k[:, :, 0], v[:, :, 0]
        scores = q @ K.transpose(-1, -2) / self.d_k**0.5
        visible = torch.arange(K.shape[2], device=x.device)[None, :] <= pos[:, None]
        return self._out(scores.masked_fill(~visible[:, None, None, :], float("-inf")).softmax(-1) @ V)


class MLP(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.W_in = _linear(cfg.d_model, cfg.d_ff, cfg.block_bias, "mlp")
        self.W_out = _linear(cfg.d_ff, cfg.d_model, cfg.block_bias, "mlp")
        self.relu = cfg.activation == "relu"

    def forward(self, x: Tensor) -> Tensor:
        """ReLU in place on W_in's fresh output (its backward reads the result, and W_in's reads its input): the
        same numbers without a second hidden-sized tensor."""
        h = self.W_in(x)
        return self.W_out(F.relu_(h) if self.relu else F.gelu(h))


def _norm(cfg: ModelConfig) -> nn.Module:
    return nn.Identity() if cfg.norm == "none" else nn.LayerNorm(cfg.d_model, eps=cfg.ln_eps)


class Block(nn.Module):
    """Post-LN: X_ao = LN(X + Attn(X)); X' = LN(X_ao + MLP(X_ao)). Pre-LN: X + Attn(LN X), then + MLP(LN ·)."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.pre = cfg.norm == "pre"
        self.attn, self.mlp = Attention(cfg), MLP(cfg)
        self.ln1, self.ln2 = _norm(cfg), _norm(cfg)

    def forward(self, x: Tensor, rope: tuple[Tensor, Tensor] | None, cache: dict | None, prefix: str,
                queries: Queries | None = None, kv: tuple[Tensor, Tensor] | None = None, pos: Tensor | None = None
                ) -> Tensor:
        """With ``queries`` the block returns those positions alone: exact, since nothing after it reads more.
        With ``kv`` (a decoding step) ``x`` is one new position per row, at ``pos``, attending to the cache."""
        def attend(h: Tensor) -> Tensor:
            if kv is not None:
                return self.attn.step(h, rope, kv, pos)
            return self.attn(h, rope, cache, f"{prefix}.attn", queries)

        if self.pre:
            a = attend(self.ln1(x))
            x = x if queries is None else x[:, queries.index]
            x_ao = x + a
            out = x_ao + self.mlp(self.ln2(x_ao))
        else:
            a = attend(x)
            x = x if queries is None else x[:, queries.index]
            x_ao = self.ln1(x + a)
            out = self.ln2(x_ao + self.mlp(x_ao))
        if cache is not None:
            cache[f"{prefix}.hook_resid_pre"] = x.detach()
            cache[f"{prefix}.hook_attn_out"] = a.detach()
            cache[f"{prefix}.hook_resid_mid"] = x_ao.detach()
            cache[f"{prefix}.hook_resid_post"] = out.detach()
        return out


class Transformer(nn.Module):
    """Decoder-only transformer. Logits asked for at the last position or at chosen positions come from a final
    block that computes queries, attention output, MLP and head at those positions alone (keys and values at all):
    a training step whose loss reads a third of the positions does a third of the final block's work."""

    def __init__(self, cfg: ModelConfig, vocab_size: int):
        super().__init__()
        self.cfg, self.vocab_size = cfg, vocab_size
        self.embed = nn.Embedding(vocab_size, cfg.d_model)
        self.pos_embed = nn.Embedding(cfg.max_positions, cfg.d_model) if cfg.positions == "learned" else None
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.depth))
        self.ln_final = nn.LayerNorm(cfg.d_model, eps=cfg.ln_eps) if cfg.final_norm else nn.Identity()
        self.head = _linear(cfg.d_model, vocab_size, cfg.head_bias, "head")
        if cfg.tied_head:
            self.head.weight = self.embed.weight
        self._cache: dict[str, Tensor] | None = None
        if cfg.positions == "rope":
            inv = 1.0 / (10000 ** (torch.arange(0, cfg.d_k, 2).float() / cfg.d_k))
            ang = torch.arange(cfg.max_positions).float()[:, None] * inv[None, :]
            cos, sin = ang.cos(), ang.sin()  # (positions, d_k / 2), widened to d_k for ``_rope``
            self.register_buffer("rope_cos", torch.cat((cos, cos), -1), persistent=False)
            self.register_buffer("rope_sin", torch.cat((-sin, sin), -1), persistent=False)

    def forward(self, tokens: Tensor, positions: Literal["last", "all"] | list[int] | Tensor = "last") -> Tensor:
        """Logits at the last position (B, V), at all positions (B, T, V), or at chosen positions (B, len, V)."""
        B, T = tokens.shape
        if T > self.cfg.max_positions:
            raise ValueError(f"sequence length {T} exceeds model.max_positions={self.cfg.max_positions}")
        x = self.embed(tokens)
        if self.pos_embed is not None:
            x = x + self.pos_embed.weight[:T]
        rope = (self.rope_cos[:T], self.rope_sin[:T]) if self.cfg.positions == "rope" else None
        cache = self._cache
        if cache is not None:
            cache["hook_embed"] = x.detach()
        queries = None if cache is not None else self._queries(positions, T, x.device)
        last = len(self.blocks) - 1
        for i, block in enumerate(self.blocks):
            x = block(x, rope, cache, f"blocks.{i}", queries=queries if i == last else None)
        if isinstance(positions, str):
            x = x[:, -1] if positions == "last" else x
        elif queries is None:
            x = x[:, torch.as_tensor(positions, device=x.device)]
        return self.head(self.ln_final(x))

    @staticmethod
    def _queries(positions: Literal["last", "all"] | list[int] | Tensor, T: int, device: torch.device
                 ) -> Queries | None:
        if isinstance(positions, str):
            return Queries(slice(T - 1, T), None) if positions == "last" else None
        index = torch.as_tensor(positions, device=device) % T
        return Queries(index, torch.arange(T, device=device) <= index[:, None])

    @torch.no_grad()
    def generate(self, tokens: Tensor, prompt_len: Tensor, max_new: int, eos: int, pad: int = 0) -> Tensor:
        """Greedy continuation of each row's first ``prompt_len`` tokens with a key/value cache: (B, max_new)
        tokens, ``pad`` after a row's ``eos``. One forward pass over the prompts fills the cache; each step
        then costs one position per row. Equal to decoding by full forward passes (up to float rounding)."""
        B, P = len(tokens), int(prompt_len.max())
        max_new = max(0, min(max_new, self.cfg.max_positions - P + 1))
        width = P + max_new - 1
        with self.hooks() as cache:
            logits = self(tokens[:, :P], "all")
        kv = []
        for i in range(len(self.blocks)):
            k, v = cache[f"blocks.{i}.attn.hook_k"], cache[f"blocks.{i}.attn.hook_v"]
            K, V = k.new_zeros(*k.shape[:2], width, k.shape[3]), v.new_zeros(*v.shape[:2], width, v.shape[3])
            K[:, :, :P], V[:, :, :P] = k, v
            kv.append((K, V))
        rows = torch.arange(B, device=tokens.device)
        out = torch.full((B, max_new), pad, dtype=tokens.dtype, device=tokens.device)
        done = torch.zeros(B, dtype=torch.bool, device=tokens.device)
        nxt = logits[rows, prompt_len - 1].argmax(-1)
        for s in range(max_new):
            nxt = torch.where(done, pad, nxt)
            out[:, s] = nxt
            done |= nxt == eos
            if s == max_new - 1 or bool(done.all()):
                break
            pos = prompt_len + s  # where the token just chosen sits
            x = self.embed(nxt)[:, None]
            if self.pos_embed is not None:
                x = x + self.pos_embed.weight[pos][:, None]
            rope = ((self.rope_cos[pos][:, None, None], self.rope_sin[pos][:, None, None])
                    if self.cfg.positions == "rope" else None)
            for block, layer_kv in zip(self.blocks, kv, strict=True):
                x = block(x, rope, None, "", kv=layer_kv, pos=pos)
            nxt = self.head(self.ln_final(x[:, 0])).argmax(-1)
        return out

    @contextmanager
    def hooks(self) -> Iterator[dict[str, Tensor]]:
        """Record every named activation of the forward passes run inside the block."""
        self._cache = {}
        try:
            yield self._cache
        finally:
            self._cache = None

    @contextmanager
    def ablated(self, heads: list[tuple[int, int]], how: Literal["zero", "mean"] = "zero") -> Iterator[None]:
        """Inside the block, the (layer, head) pairs in ``heads`` are knocked out before W_O at every position —
        zeroed, or replaced by their mean over the batch; leaving it (also by an error) restores the model."""
        for block in self.blocks:
            if block.attn.ablate:
                raise RuntimeError("Transformer.ablated: heads are already knocked out; nest no ablations")
        try:
            for layer, head in heads:
                self.blocks[layer].attn.ablate[head] = how
            yield
        finally:
            for block in self.blocks:
                block.attn.ablate = {}

    @torch.no_grad()
    def run_with_cache(self, tokens: Tensor, names: list[str] | None = None) -> tuple[Tensor, dict[str, Tensor]]:
        """Logits of all positions plus the activations asked for by name (all when ``names`` is None)."""
        with self.hooks() as cache:
            logits = self(tokens, positions="all")
        if names is not None:
            missing = [n for n in names if n not in cache]
            if missing:
                raise KeyError(f"no activation named {missing[0]!r}; available: {', '.join(sorted(cache))}")
            cache = {n: cache[n] for n in names}
        return logits, cache
