"""The transformer: causality, the last- and chosen-position fast paths, activation cache, parameter count (spec §3)."""

from __future__ import annotations

import itertools

import pytest
import torch

from reasonlab.config import ModelConfig
from reasonlab.init import apply_init_rate
from reasonlab.models.transformer import Transformer

VOCAB = 50
T = 9


def make(seed: int = 0, vocab: int = VOCAB, gamma: float = 0.3, **kw) -> Transformer:
    base = {"d_model": 24, "d_k": 8, "d_v": 8, "d_ff": 32, "depth": 2}
    base.update(kw)
    model = Transformer(ModelConfig(**base), vocab)
    # a large init (small γ) so that every position's output depends visibly on its inputs
    apply_init_rate(model, gamma, generator=torch.Generator().manual_seed(seed))
    return model.eval()


def tokens(n: int = 3, seed: int = 0, length: int = T) -> torch.Tensor:
    return torch.randint(1, VOCAB, (n, length), generator=torch.Generator().manual_seed(seed))


@pytest.mark.parametrize(
    ("norm", "positions"), list(itertools.product(["post", "pre", "none"], ["learned", "rope", "none"]))
)
def test_causal(norm, positions):
    model = make(norm=norm, positions=positions, n_heads=2)
    x = tokens()
    with torch.no_grad():
        base = model(x, positions="all")
        assert base.shape == (3, T, VOCAB)
        for t in (0, 3, T - 2):
            y = x.clone()
            y[:, t + 1 :] = (y[:, t + 1 :] + 7) % (VOCAB - 1) + 1  # change every later token
            out = model(y, positions="all")
            assert torch.allclose(out[:, : t + 1], base[:, : t + 1], atol=1e-5), t
            assert not torch.allclose(out[:, t + 1 :], base[:, t + 1 :], atol=1e-3), t  # the change is seen


def test_position_matters_unless_no_positions():
    """Permuting earlier tokens changes the last output with positions, and (causal mask aside) not without."""
    x = tokens(2, seed=3)
    swapped = x.clone()
    swapped[:, [0, 1]] = x[:, [1, 0]]
    with torch.no_grad():
        learned = make(positions="learned")
        assert not torch.allclose(learned(x), learned(swapped), atol=1e-4)
        nopos = make(positions="none", depth=1)
        # one layer, no positions: the last query attends to a set of keys, so order before it is invisible
        assert torch.allclose(nopos(x), nopos(swapped), atol=1e-5)


SHAPES = [  # model variants the fast paths must agree with the full pass on
    {},
    {"n_heads": 4},
    {"positions": "rope", "n_heads": 2},
    {"tied_head": True, "head_bias": False},
    {"norm": "pre", "final_norm": True, "block_bias": True},
    {"norm": "none", "activation": "gelu", "depth": 3},
    {"depth": 1, "d_k": 6, "d_v": 10},
]


@pytest.mark.parametrize("kw", SHAPES)
def test_last_position_fast_path_matches_all(kw):
    model = make(**kw)
    x = tokens(4, seed=1)
    with torch.no_grad():
        last = model(x, positions="last")
        full = model(x, positions="all")
    assert last.shape == (4, VOCAB)
    assert torch.allclose(last, full[:, -1], atol=1e-5, rtol=1e-5)
    assert torch.equal(last.argmax(-1), full[:, -1].argmax(-1))


@pytest.mark.parametrize("kw", SHAPES)
def test_chosen_positions_fast_path_matches_all(kw):
    """Logits at chosen positions (the final block computing those alone, each seeing only keys up to itself)
    equal the full pass's at those positions, in any order and with negative indices."""
    model = make(**kw)
    x = tokens(4, seed=2)
    chosen = [1, 4, 7, -1, 0]
    with torch.no_grad():
        some = model(x, positions=chosen)
        full = model(x, positions="all")
    assert some.shape == (4, len(chosen), VOCAB)
    assert torch.allclose(some, full[:, chosen], atol=1e-5, rtol=1e-5)


def test_tied_head_shares_embedding():
    model = make(tied_head=True)
    assert model.head.weight is model.embed.weight
    names = [n for n, _ in model.named_parameters()]
    assert "head.weight" not in names


def test_run_with_cache_names_and_cleanup():
    model = make(depth=2, n_heads=2)
    assert model._cache is None
    x = tokens(2)
    logits, cache = model.run_with_cache(x)
    assert model._cache is None  # hooks are off again afterwards
    for layer in range(2):
        for hook in (
            "attn.hook_pattern",
            "attn.hook_q",
            "attn.hook_k",
            "attn.hook_v",
            "attn.hook_z",
            "hook_resid_pre",
            "hook_attn_out",
            "hook_resid_mid",
            "hook_resid_post",
        ):
            assert f"blocks.{layer}.{hook}" in cache, hook
    assert "hook_embed" in cache
    pattern = cache["blocks.1.attn.hook_pattern"]
    assert pattern.shape == (2, 2, T, T)
    assert torch.allclose(pattern.sum(-1), torch.ones(2, 2, T))
    assert float(pattern.triu(1).abs().max()) == 0.0  # causal
    assert cache["blocks.1.hook_resid_post"].shape == (2, T, 24)
    assert torch.equal(cache["blocks.0.hook_resid_post"], cache["blocks.1.hook_resid_pre"])
    assert torch.allclose(logits, model(x, positions="all"), atol=1e-5)
    assert torch.allclose(model.head(cache["blocks.1.hook_resid_post"]), logits, atol=1e-5)
    # a second forward pass after run_with_cache records nothing
    model(x)
    assert model._cache is None


def test_run_with_cache_selected_names():
    model = make()
    _, cache = model.run_with_cache(tokens(1), names=["blocks.0.attn.hook_pattern"])
    assert set(cache) == {"blocks.0.attn.hook_pattern"}
    with pytest.raises(KeyError, match="blocks.9.hook_resid_post"):
        model.run_with_cache(tokens(1), names=["blocks.9.hook_resid_post"])
    assert model._cache is None


def test_too_long_sequence_raises():
    model = make(max_positions=8)
    with pytest.raises(ValueError, match="max_positions"):
        model(tokens(1, length=9))


def test_rope_needs_even_d_k():
    with pytest.raises(ValueError, match="d_k"):
        Transformer(ModelConfig(d_model=16, d_k=7, d_v=8, d_ff=16, positions="rope"), VOCAB)


@pytest.mark.parametrize(("depth", "millions"), [(2, 2.73), (6, 7.86)])
def test_anchor_preset_parameter_count(depth, millions):
    model = Transformer(ModelConfig(depth=depth), 201)
    n = sum(p.numel() for p in model.parameters())
    assert round(n / 1e6, 2) == millions
    per_block = sum(p.numel() for p in model.blocks[0].parameters())
    assert round(per_block / 1e6, 2) == 1.28


def test_anchor_preset_structure():
    cfg = ModelConfig()
    model = Transformer(cfg, 201)
    assert (cfg.d_model, cfg.n_heads, cfg.d_k, cfg.d_v, cfg.d_ff, cfg.norm) == (400, 1, 200, 200, 1200, "post")
    assert model.pos_embed.weight.shape == (20, 400)
    assert model.head.bias is not None
    assert all(m.bias is None for b in model.blocks for m in (b.attn.W_Q, b.attn.W_O, b.mlp.W_in, b.mlp.W_out))
